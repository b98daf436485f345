package io.zse.serve;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zse.generate.Generator;
import io.zse.generate.EndConditions;
import io.zse.generate.SamplingParameters;
import io.zse.generate.SequenceDecoder;
import io.zse.generate.TokenConstraint;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The engine as the API uses it: many sequences joining and leaving one batch, cancellation, admission limits. */
class BatchingEngineTest extends OnTinyStoriesQ8 {
    private static final String[] PROMPTS = {"Once upon a time", "The little dog ran to the park and",
            "Lily had a red ball.", "Tom", "One day, a girl named Sue", "The sun was hot", "Ben and his mom"};

    private static BatchingEngine engine(EngineLimits limits) {
        return new BatchingEngine(model, tokenizer, limits, 64L << 20, new EngineMetrics(new SimpleMeterRegistry()));
    }

    /** Collects a sequence's text and finish reason. */
    private static class Collected implements GenerationListener {
        final StringBuilder text = new StringBuilder();
        final CompletableFuture<String> finish = new CompletableFuture<>();
        final AtomicInteger steps = new AtomicInteger();

        @Override
        public void onStep(SequenceDecoder.Step step) {
            steps.incrementAndGet();
            text.append(step.text());
            if (step.finished()) {
                finish.complete(step.finish());
            }
        }

        @Override
        public void onError(RuntimeException error) {
            finish.completeExceptionally(error);
        }
    }

    @Test
    void sequencesJoiningAndLeavingTheBatchGiveWhatEachGivesAlone() throws Exception {
        Generator alone = new Generator(model, tokenizer, model.config().eosTokenIds());
        try (BatchingEngine engine = engine(new EngineLimits(3, 16, 0, 64))) {
            List<Collected> results = new ArrayList<>();
            for (int i = 0; i < PROMPTS.length; i++) {
                Collected c = new Collected();
                // different budgets so sequences leave at different steps; three at most run together
                engine.submit(new GenerationRequest(tokenizer.encode(PROMPTS[i], true), 20 + 15 * i,
                        SamplingParameters.GREEDY, 0, List.of()), c);
                results.add(c);
            }
            for (int i = 0; i < PROMPTS.length; i++) {
                String finish = results.get(i).finish.get(60, TimeUnit.SECONDS);
                Generator.Result expected = alone.generate(tokenizer.encode(PROMPTS[i], true), 20 + 15 * i,
                        SamplingParameters.GREEDY, 0, List.of(), t -> { });
                assertEquals(expected.text(), results.get(i).text.toString(), "text of prompt " + i);
                assertEquals(expected.finishReason(), finish, "finish of prompt " + i);
            }
            assertTrue(engine.awaitIdle(Duration.ofSeconds(5)));
            assertEquals(0, engine.kvBytesInUse());
        }
    }

    @Test
    void closingTheEngineFreesTheModelsActivationBuffers() throws Exception {
        try (BatchingEngine engine = engine(EngineLimits.DEFAULT)) {
            Collected c = new Collected();
            engine.submit(new GenerationRequest(tokenizer.encode(PROMPTS[0], true), 5, SamplingParameters.GREEDY, 0,
                    List.of()), c);
            c.finish.get(60, TimeUnit.SECONDS);
            assertTrue(engine.awaitIdle(Duration.ofSeconds(5)));
            assertTrue(backend.openBuffers() > 0, "the forward pass keeps its buffers between steps");
        }
        assertEquals(0, backend.openBuffers(), "off-heap activations freed at engine shutdown");
    }

    @Test
    void cancellingFreesTheKvCacheAtTheNextStep() throws Exception {
        try (BatchingEngine engine = engine(EngineLimits.DEFAULT)) {
            AtomicLong bytesWhileRunning = new AtomicLong();
            AtomicBoolean finishedSeen = new AtomicBoolean();
            AtomicInteger steps = new AtomicInteger();
            BatchingEngine.Handle[] handle = new BatchingEngine.Handle[1];
            CountDownLatch submitted = new CountDownLatch(1);
            handle[0] = engine.submit(new GenerationRequest(tokenizer.encode("Once upon a time", true), 400,
                    SamplingParameters.temperature(1.0), 7, List.of()), new GenerationListener() {
                @Override
                public void onStep(SequenceDecoder.Step step) {
                    finishedSeen.compareAndSet(false, step.finished());
                    if (steps.incrementAndGet() == 3) {
                        bytesWhileRunning.set(engine.kvBytesInUse());
                        try {
                            submitted.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        handle[0].cancel();
                    }
                }

                @Override
                public void onError(RuntimeException error) {
                    throw error;
                }
            });
            submitted.countDown();
            assertTrue(engine.awaitIdle(Duration.ofSeconds(30)));
            assertEquals(0, engine.kvBytesInUse(), "the cancelled sequence's cache is freed");
            // blocks are taken as the sequence grows: by its third token, prompt + 2 positions were computed
            int computed = tokenizer.encode("Once upon a time", true).length + 2;
            var c = model.config();
            long blocks = (computed + KvPoolSettings.DEFAULT_BLOCK_SIZE - 1) / KvPoolSettings.DEFAULT_BLOCK_SIZE;
            assertEquals(2L * 4 * c.numLayers() * c.numKvHeads() * c.headDim() * blocks * KvPoolSettings.DEFAULT_BLOCK_SIZE,
                    bytesWhileRunning.get());
            assertEquals(3, steps.get(), "no output after cancel");
            assertFalse(finishedSeen.get(), "the sequence was cancelled, not finished");
        }
    }

    @Test
    void aFullQueueAndAStoppedEngineRefuseRequests() throws Exception {
        try (BatchingEngine engine = engine(new EngineLimits(1, 1, 0, 64))) {
            CountDownLatch inPrefill = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            GenerationRequest request = new GenerationRequest(tokenizer.encode("Tom", true), 5,
                    SamplingParameters.GREEDY, 0, List.of());
            Collected first = new Collected() {
                @Override
                public void onPrefilled() {
                    inPrefill.countDown();
                    try {
                        release.await(); // holds the engine thread so the queue stays full
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
            engine.submit(request, first);
            assertTrue(inPrefill.await(30, TimeUnit.SECONDS));
            Collected second = new Collected();
            engine.submit(request, second);
            AdmissionException full = assertThrows(AdmissionException.class, () -> engine.submit(request, new Collected()));
            assertTrue(full.getMessage().contains("queue is full"), full.getMessage());
            release.countDown();
            assertEquals(first.finish.get(30, TimeUnit.SECONDS), second.finish.get(30, TimeUnit.SECONDS));
            assertEquals(first.text.toString(), second.text.toString());

            engine.stopAdmitting();
            assertThrows(AdmissionException.class, () -> engine.submit(request, new Collected()));
        }
    }

    /**
     * A sequence whose sampling fails (here its constraint, at its fourth token) fails alone: the sequence beside it
     * in the batch gives what it gives alone, and both caches are freed. Once, the whole batch failed with it.
     */
    @Test
    void aSequenceThatFailsWhileSamplingFailsAlone() throws Exception {
        IllegalStateException broken = new IllegalStateException("the constraint broke");
        TokenConstraint failsAtTheFourthToken = new TokenConstraint() {
            private final BitSet all = allTokens();
            private int accepted;

            @Override
            public BitSet allowed(int remainingTokens) {
                return all;
            }

            @Override
            public void accept(int token) {
                if (++accepted == 4) {
                    throw broken;
                }
            }

            @Override
            public boolean complete() {
                return false;
            }
        };
        try (BatchingEngine engine = engine(new EngineLimits(4, 4, 0, 64))) {
            int[] prompt = tokenizer.encode(PROMPTS[1], true);
            Collected failing = new Collected();
            Collected beside = new Collected();
            engine.submit(new GenerationRequest(tokenizer.encode(PROMPTS[0], true), 30, SamplingParameters.GREEDY, 0,
                    List.of(), failsAtTheFourthToken, false, false, EndConditions.DEFAULT), failing);
            engine.submit(new GenerationRequest(prompt, 30, SamplingParameters.GREEDY, 0, List.of()), beside);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> failing.finish.get(60, TimeUnit.SECONDS));
            assertSame(broken, e.getCause());
            String finish = beside.finish.get(60, TimeUnit.SECONDS);
            Generator.Result expected = new Generator(model, tokenizer, model.config().eosTokenIds())
                    .generate(prompt, 30, SamplingParameters.GREEDY, 0, List.of(), t -> { });
            assertEquals(expected.text(), beside.text.toString());
            assertEquals(expected.finishReason(), finish);
            assertTrue(engine.awaitIdle(Duration.ofSeconds(5)));
            assertEquals(0, engine.kvBytesInUse());
        }
    }

    private static BitSet allTokens() {
        BitSet all = new BitSet();
        all.set(0, model.config().vocabSize());
        return all;
    }

    @Test
    void promptsThatDoNotFitTheContextAreRejectedAtSubmit() {
        try (BatchingEngine engine = engine(new EngineLimits(4, 4, 8, 64))) {
            int[] longPrompt = tokenizer.encode("Once upon a time there was a little girl who liked to play", true);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> engine.submit(
                    new GenerationRequest(longPrompt, 5, SamplingParameters.GREEDY, 0, List.of()), new Collected()));
            assertTrue(e.getMessage().contains("context"), e.getMessage());
            assertEquals(8, engine.contextLength());
        }
    }
}
