package io.zse.serve;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The served model's life: loading (on a background thread, so the port is open meanwhile), ready, failed, or
 * draining at shutdown. Health checks and the API read it; only the loader and shutdown change it.
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

    public void ready(LoadedModel model, long loadMillis) {
        state.set(new State(Phase.READY, model, null, loadMillis));
    }

    public void failed(String reason) {
        state.set(new State(Phase.FAILED, null, reason, 0));
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
