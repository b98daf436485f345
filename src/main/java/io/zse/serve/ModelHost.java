package io.zse.serve;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The served model's life: loading (on a background thread, so the port is open meanwhile), ready, failed (to load,
 * or later when its weights fail their check), draining at shutdown, then stopped once shutdown has taken the model to
 * close it. Health checks and the API read it; only the loader, the weight check and shutdown change it.
 */
public final class ModelHost {
    public enum Phase { LOADING, READY, FAILED, DRAINING, STOPPED }

    /** A consistent view: the phase, the model once loaded, the failure reason once failed. */
    public record State(Phase phase, LoadedModel model, String failure, long loadMillis) {
    }

    private final AtomicReference<State> state = new AtomicReference<>(new State(Phase.LOADING, null, null, 0));

    public State state() {
        return state.get();
    }

    /**
     * The model is loaded. A host that began draining while it loaded stays draining: it keeps the model, so shutdown
     * still closes it, and the model's engine refuses requests from the start. A stopped host does not take it: shutdown
     * has passed, so the caller closes it.
     *
     * @return whether the model now serves (false while draining or stopped)
     */
    public boolean ready(LoadedModel model, long loadMillis) {
        State s = state.updateAndGet(old -> switch (old.phase()) {
            case STOPPED -> old;
            case DRAINING -> new State(Phase.DRAINING, model, old.failure(), loadMillis);
            default -> new State(Phase.READY, model, null, loadMillis);
        });
        if (s.phase() == Phase.DRAINING) {
            model.engine().stopAdmitting();
        }
        return s.phase() == Phase.READY;
    }

    /**
     * The load failed, or the loaded model turned out unfit to serve (its weights are corrupt): readiness goes DOWN
     * with the reason. A loaded model stays here so shutdown still closes it; a draining host stays draining.
     */
    public void failed(String reason) {
        state.updateAndGet(old -> shuttingDown(old) ? old
                : new State(Phase.FAILED, old.model(), reason, old.loadMillis()));
    }

    /**
     * A ready model whose file shrank after it was mapped can no longer be read (its reads past the new end fault): the
     * host fails with the reason. The health checks call this, so the check costs the probes, not every request.
     *
     * @return the reason, when this call failed the host
     */
    public Optional<String> failIfFileShrunk() {
        State s = state.get();
        if (s.phase() != Phase.READY) {
            return Optional.empty();
        }
        return s.model().file().shrunk()
                .filter(reason -> state.compareAndSet(s, new State(Phase.FAILED, s.model(), reason, s.loadMillis())));
    }

    /** Stops admitting requests: readiness goes DOWN and the engine refuses new sequences. */
    public State drain() {
        return shutDown(Phase.DRAINING);
    }

    /** Shutdown's last step: as {@link #drain}, and a model whose load ends from now on is left to its loader. */
    public State stop() {
        return shutDown(Phase.STOPPED);
    }

    private State shutDown(Phase phase) {
        State s = state.updateAndGet(old -> old.phase() == Phase.STOPPED ? old
                : new State(phase, old.model(), old.failure(), old.loadMillis()));
        if (s.model() != null) {
            s.model().engine().stopAdmitting();
        }
        return s;
    }

    private static boolean shuttingDown(State s) {
        return s.phase() == Phase.DRAINING || s.phase() == Phase.STOPPED;
    }
}
