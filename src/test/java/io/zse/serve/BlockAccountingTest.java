package io.zse.serve;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCacheType;
import io.zse.generate.SamplingParameters;
import io.zse.generate.SequenceDecoder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Property: after any mix of finishes, cancels (from outside, or from a listener mid-step), clients that throw,
 * preemptions and shared prefixes, the pool is back to its idle count and every sequence ended exactly once.
 */
class BlockAccountingTest extends OnTinyStoriesQ8 {

    /** How one sequence of the schedule behaves. */
    private enum Fate { FINISH, CANCEL_FROM_OUTSIDE, CANCEL_IN_LISTENER, CLIENT_THROWS }

    /** Records how a sequence ended; counts listener calls after the end (there must be none). */
    private static final class Outcome implements GenerationListener {
        final CompletableFuture<String> ended = new CompletableFuture<>();
        // the engine may call back before submit() has returned the handle to the test thread
        final CompletableFuture<BatchingEngine.Handle> handle = new CompletableFuture<>();
        final Fate fate;
        final int stopAfter;
        int steps;
        int callsAfterEnd;

        Outcome(Fate fate, int stopAfter) {
            this.fate = fate;
            this.stopAfter = stopAfter;
        }

        @Override
        public synchronized void onStep(SequenceDecoder.Step step) {
            if (ended.isDone()) {
                callsAfterEnd++;
            }
            steps++;
            if (steps == stopAfter && fate == Fate.CANCEL_IN_LISTENER) {
                handle.join().cancel();
                ended.complete("cancelled");
                return;
            }
            if (steps == stopAfter && fate == Fate.CLIENT_THROWS) {
                ended.complete("client gone");
                throw new IllegalStateException("the client's connection is closed");
            }
            if (step.finished()) {
                ended.complete(step.finish());
            }
        }

        @Override
        public synchronized void onError(RuntimeException error) {
            if (ended.isDone()) {
                callsAfterEnd++;
            }
            ended.complete("error: " + error.getMessage());
        }
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void everyBlockComesBack(long seed) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        KvCacheType type = KvCacheType.values()[(int) (seed % 3)];
        // a pool for a few sequences only: the 24 below preempt each other
        long bytes = 160L * model.kvBytesPerPosition(type);
        KvPoolSettings kv = new KvPoolSettings(type, bytes, 1 + random.nextInt(16), random.nextBoolean());
        EngineLimits limits = new EngineLimits(1 + random.nextInt(8), 64, 0, 1 + random.nextInt(96));
        int[] sharedStart = tokenizer.encode("Once upon a time, there was a little girl named Lily. She", true);
        List<Outcome> outcomes = new ArrayList<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (BatchingEngine engine = new BatchingEngine(model, tokenizer, limits, kv, new EngineMetrics(registry))) {
            KvBlockPool pool = engine.pool();
            for (int i = 0; i < 24; i++) {
                int[] prompt = random.nextBoolean() ? sharedStart
                        : random.ints(1 + random.nextInt(60), 3, model.config().vocabSize()).toArray();
                Fate fate = Fate.values()[random.nextInt(Fate.values().length)];
                Outcome outcome = new Outcome(fate, 1 + random.nextInt(20));
                outcome.handle.complete(engine.submit(new GenerationRequest(prompt, 1 + random.nextInt(80),
                        SamplingParameters.temperature(1.0), random.nextLong(), List.of()), outcome));
                outcomes.add(outcome);
                if (fate == Fate.CANCEL_FROM_OUTSIDE) {
                    Thread.sleep(random.nextInt(5));
                    outcome.handle.join().cancel();
                    outcome.ended.complete("cancelled");
                }
            }
            for (Outcome o : outcomes) {
                String end = o.ended.get(60, TimeUnit.SECONDS);
                assertTrue(!end.startsWith("error"), "no sequence fails because others were admitted: " + end);
            }
            assertTrue(engine.awaitIdle(Duration.ofSeconds(30)), "every sequence left the engine");
            assertEquals(0, pool.usedBlocks(), "blocks held after the schedule");
            assertEquals(pool.totalBlocks(), pool.availableBlocks(), "free plus cached-unused blocks");
            assertEquals(0, engine.kvBytesInUse());
            System.out.printf("seed %d: %s, %s, %.0f preemptions%n", seed, kv, limits,
                    registry.counter("zse.preempted.sequences").count());
            pool.dropCachedPrefixes();
            assertEquals(pool.totalBlocks(), pool.availableBlocks());
        }
        for (Outcome o : outcomes) {
            // A cancel from another thread takes effect at the next step: the step being delivered may still arrive.
            int allowed = o.fate == Fate.CANCEL_FROM_OUTSIDE ? 1 : 0;
            assertTrue(o.callsAfterEnd <= allowed, "no listener call after a sequence ended (" + o.fate + "): "
                    + o.callsAfterEnd);
        }
    }
}
