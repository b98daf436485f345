package io.zse.serve;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zse.generate.SamplingParameters;
import io.zse.generate.SequenceDecoder;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The host's phases as shutdown meets a load still running. */
class ModelHostTest extends OnTinyStoriesQ8 {
    /**
     * A model whose load ends after shutdown began does not bring the host back to READY (it once did, and served
     * requests while the process drained): the host keeps it for shutdown to close, and its engine refuses requests.
     */
    @Test
    void aLoadThatEndsWhileDrainingLeavesTheHostDraining() {
        ModelHost host = new ModelHost();
        try (BatchingEngine engine = engine()) {
            LoadedModel loaded = loaded(engine);
            assertEquals(ModelHost.Phase.DRAINING, host.drain().phase());
            assertFalse(host.ready(loaded, 42));
            assertEquals(ModelHost.Phase.DRAINING, host.state().phase());
            assertSame(loaded, host.state().model(), "kept for shutdown to close");
            assertThrows(AdmissionException.class, () -> engine.submit(new GenerationRequest(
                    tokenizer.encode("Tom", true), 3, SamplingParameters.GREEDY, 0, List.of()), new Ignored()));
            host.failed("weights corrupt");
            assertEquals(ModelHost.Phase.DRAINING, host.state().phase());
        }
    }

    /** Once shutdown has taken the host's model (none yet here), a load that ends is not kept: its loader closes it. */
    @Test
    void aLoadThatEndsAfterShutdownIsNotKept() {
        ModelHost host = new ModelHost();
        try (BatchingEngine engine = engine()) {
            assertEquals(new ModelHost.State(ModelHost.Phase.STOPPED, null, null, 0), host.stop());
            assertFalse(host.ready(loaded(engine), 42));
            assertEquals(new ModelHost.State(ModelHost.Phase.STOPPED, null, null, 0), host.state());
            host.drain();
            host.failed("weights corrupt");
            assertEquals(ModelHost.Phase.STOPPED, host.state().phase());
        }
    }

    private static final class Ignored implements GenerationListener {
        @Override
        public void onStep(SequenceDecoder.Step step) {
        }

        @Override
        public void onError(RuntimeException error) {
        }
    }

    @Test
    void aLoadThatEndsBeforeShutdownMakesTheHostReady() {
        ModelHost host = new ModelHost();
        try (BatchingEngine engine = engine()) {
            LoadedModel loaded = loaded(engine);
            assertTrue(host.ready(loaded, 42));
            assertEquals(new ModelHost.State(ModelHost.Phase.READY, loaded, null, 42), host.state());
        }
    }

    private static BatchingEngine engine() {
        return new BatchingEngine(model, tokenizer, EngineLimits.DEFAULT, 16L << 20,
                new EngineMetrics(new SimpleMeterRegistry()));
    }

    /** What the host holds: the engine is all it touches. */
    private static LoadedModel loaded(BatchingEngine engine) {
        return new LoadedModel("tiny", file, backend, model, tokenizer, null, null, false, engine, null, 0);
    }
}
