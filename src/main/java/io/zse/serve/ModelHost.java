package io.zse.serve;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The served model's life: loading (on a background thread, so the port is open meanwhile), ready, failed (to load,
 * or later when its weights fail their check), or draining at shutdown. Health checks and the API read it; only the
 * loader, the weight check and shutdown change it.
 */
public final class ModelHost {
    public enum Phase { LOADING, READY, FAILED, DRAINING }

    /** A consistent view: the phase, the model once loaded, the failure reason once failed. */
    public record State(Phase phase, LoadedModel model, String failure, long loadMillis) {
    }

    private final AtomicReference<State> state = new AtomicReference<>(new State(Phase.LOADING, null, null, 0));

    public State state() {
        return state.get();
    }

    /**
     * The model is loaded. A host that began draining while it loaded stays draining: it keeps the model, so shutdown
     * still closes it, and the model's engine refuses requests from the start.
     *
     * @return whether the model now serves (false while draining)
     */
    public boolean ready(LoadedModel model, long loadMillis) {
        State s = state.updateAndGet(old -> old.phase() == Phase.DRAINING
                ? new State(Phase.DRAINING, model, old.failure(), loadMillis)
                : new State(Phase.READY, model, null, loadMillis));
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
        state.updateAndGet(old -> old.phase() == Phase.DRAINING ? old
                : new State(Phase.FAILED, old.model(), reason, old.loadMillis()));
    }

    /** Stops admitting requests: readiness goes DOWN and the engine refuses new sequences. */
    public State drain() {
        State s = state.updateAndGet(old -> new State(Phase.DRAINING, old.model(), old.failure(), old.loadMillis()));
        if (s.model() != null) {
            s.model().engine().stopAdmitting();
        }
        return s;
    }
}
