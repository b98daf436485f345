package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.Generator;
import io.zse.generate.SamplingParameters;
import io.zse.generate.SequenceDecoder;
import io.zse.serve.BatchingEngine;
import io.zse.serve.EngineLimits;
import io.zse.serve.EngineMetrics;
import io.zse.serve.GenerationListener;
import io.zse.serve.GenerationRequest;
import io.zse.serve.KvPoolSettings;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine gives a sequence the same greedy ids however it is scheduled: alone, with its prompt prefilled in chunks
 * of 1, 7, 64 or whole, in a batch that others join and leave, after a prefix-cache hit, and after being preempted and
 * recomputed. With an F32 cache the ids are transformers' own (the goldens of TinyStories-656K and of the tiny
 * checkpoint of each architecture); with F16 and INT8 caches, what the one-sequence generator gives with that cache.
 * Phi-3's second prompt starts the first but fits LongRoPE's original context, so its keys are rotated otherwise and
 * must not come from the first one's cached blocks.
 */
class EngineGoldenTest {
    private static final String[] ARCHITECTURES = {"llama-untied", "llama3-rope-scaling", "qwen2-bias-tied",
            "mistral-sliding-window", "qwen3-qk-norm", "phi3-longrope", "gemma2-softcap-local",
                        "gemma3-local-global"};

    @TempDir
    static Path dir;
    static final Map<String, Loaded> MODELS = new HashMap<>();

    /** A model with its tokenizer and the golden runs recorded for it. */
    record Loaded(ZseFile file, CpuBackend backend, LlamaModel model, Tokenizer tokenizer, List<GreedyGolden> goldens) {
    }

    @AfterAll
    static void close() {
        MODELS.values().forEach(m -> {
            m.backend().close();
            m.file().close();
        });
    }

    static Stream<Arguments> modelsAndCaches() {
        return Stream.concat(Stream.of("tinystories-656k"), Stream.of(ARCHITECTURES))
                .flatMap(m -> Stream.of(KvCacheType.values()).map(t -> Arguments.of(m, t)));
    }

    private static synchronized Loaded load(String name) throws IOException {
        Loaded known = MODELS.get(name);
        if (known != null) {
            return known;
        }
        Path zse;
        List<GreedyGolden> goldens = new ArrayList<>();
        if (name.equals("tinystories-656k")) {
            zse = TestModels.convertTinyStories(TensorType.F32, dir);
            ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json").get("cases")
                    .forEach(c -> goldens.add(GreedyGolden.of(c)));
        } else {
            JsonNode golden = ArchitectureGoldenTest.read("/golden/architectures/" + name + ".json");
            goldens.addAll(GreedyGolden.allOf(golden));
            zse = ArchitectureGoldenTest.converted(name, golden, goldens.getFirst(), dir);
        }
        ZseFile file = ZseFile.open(zse);
        CpuBackend backend = new CpuBackend(2);
        Loaded loaded = new Loaded(file, backend, LlamaModel.load(file, backend), TokenizerSource.fromZse(file), goldens);
        MODELS.put(name, loaded);
        return loaded;
    }

    @ParameterizedTest(name = "{0}, {1} cache")
    @MethodSource("modelsAndCaches")
    void everyScheduleGivesTheSameGreedyIds(String name, KvCacheType type) throws Exception {
        Loaded m = load(name);
        List<int[]> expected = new ArrayList<>();
        for (GreedyGolden g : m.goldens()) {
            expected.add(type == KvCacheType.F32 ? untilEos(m, g.greedyIds()) : alone(m, g, type));
        }
        int longest = m.goldens().stream().mapToInt(g -> g.promptIds().length + g.greedyIds().length).max().orElseThrow();

        for (int chunk : new int[]{1, 7, 64, 4096}) {
            try (Run run = new Run(m, new EngineLimits(8, 64, 0, chunk), settings(type, 4, 64L << 20, false))) {
                assertSameIds(expected, run.eachAlone(), "alone, prompt in chunks of " + chunk);
            }
        }
        try (Run mixed = new Run(m, new EngineLimits(3, 64, 0, 48), settings(type, 16, 64L << 20, false))) {
            assertSameIds(expected, mixed.togetherWithOthers(new SplittableRandom(11), 5),
                    "in a batch others join and leave");
        }

        Run cached = new Run(m, new EngineLimits(8, 64, 0, 2048), settings(type, 4, 64L << 20, true));
        assertSameIds(expected, cached.eachAlone(), "prefix cache filled");
        long hitsBefore = cached.engine.pool().prefixHits();
        assertSameIds(expected, cached.eachAlone(), "prefix cache hit");
        assertTrue(cached.engine.pool().prefixHits() > hitsBefore, "the second run found its prompts cached");
        cached.close();

        // copies arriving together (n > 1): the first computes the prompt, the others wait for it and share its blocks
        try (Run together = new Run(m, new EngineLimits(8, 64, 0, 2048), settings(type, 4, 64L << 20, true))) {
            assertSameIds(expected, together.copiesAtOnce(3), "copies sharing a prefix");
            assertTrue(together.engine.pool().prefixHits() > 0, "the later copies found the prompt cached");
        }

        // room for about 1.5 of the longest sequences: three copies of each run at once preempt each other
        long bytes = (long) (longest * 1.5) * m.model().kvBytesPerPosition(type);
        Run tight = new Run(m, new EngineLimits(8, 64, 0, 2048), settings(type, 4, bytes, false));
        assertSameIds(expected, tight.copiesAtOnce(3), "preempted and recomputed");
        assertTrue(tight.registry.counter("zse.preempted.sequences").count() > 0, "some sequence was preempted");
        assertEquals(0, tight.engine.pool().usedBlocks(), "every block came back");
        tight.close();
    }

    private static void assertSameIds(List<int[]> expected, List<int[]> actual, String how) {
        assertEquals(expected.size(), actual.size(), how);
        for (int i = 0; i < expected.size(); i++) {
            assertArrayEquals(expected.get(i), actual.get(i), how + ", prompt " + i);
        }
    }

    private static KvPoolSettings settings(KvCacheType type, int blockSize, long bytes, boolean prefixCache) {
        return new KvPoolSettings(type, bytes, blockSize, prefixCache);
    }

    /** The golden's ids up to the first end-of-sequence id, where the engine stops. */
    private static int[] untilEos(Loaded m, int[] ids) {
        for (int i = 0; i < ids.length; i++) {
            if (m.model().config().eosTokenIds().contains(ids[i])) {
                return Arrays.copyOf(ids, i);
            }
        }
        return ids;
    }

    /** The one-sequence generator with a cache of this type, the whole prompt at once. */
    private static int[] alone(Loaded m, GreedyGolden g, KvCacheType type) {
        Generator generator = new Generator(m.model(), m.tokenizer(), m.model().config().eosTokenIds(), type);
        return generator.generate(g.promptIds(), g.greedyIds().length, SamplingParameters.GREEDY, 0, List.of(),
                text -> { }).ids();
    }

    /** One engine over a model, and the ways of submitting its golden prompts. */
    private static final class Run implements AutoCloseable {
        final Loaded m;
        final MeterRegistry registry = new SimpleMeterRegistry();
        final BatchingEngine engine;

        Run(Loaded m, EngineLimits limits, KvPoolSettings kv) {
            this.m = m;
            this.engine = new BatchingEngine(m.model(), m.tokenizer(), limits, kv, new EngineMetrics(registry));
        }

        CompletableFuture<int[]> submit(int[] prompt, int maxTokens, SamplingParameters parameters, long seed) {
            Ids ids = new Ids();
            engine.submit(new GenerationRequest(prompt, maxTokens, parameters, seed, List.of()), ids);
            return ids.done;
        }

        List<int[]> eachAlone() throws Exception {
            List<int[]> out = new ArrayList<>();
            for (GreedyGolden g : m.goldens()) {
                out.add(submit(g.promptIds(), g.greedyIds().length, SamplingParameters.GREEDY, 0).get(60, TimeUnit.SECONDS));
            }
            return out;
        }

        /** Every golden prompt at once, among sampled sequences of random lengths submitted before and after. */
        List<int[]> togetherWithOthers(SplittableRandom random, int others) throws Exception {
            List<CompletableFuture<int[]>> noise = new ArrayList<>();
            for (int i = 0; i < others; i++) {
                noise.add(noiseRequest(random));
            }
            List<CompletableFuture<int[]>> runs = new ArrayList<>();
            for (GreedyGolden g : m.goldens()) {
                runs.add(submit(g.promptIds(), g.greedyIds().length, SamplingParameters.GREEDY, 0));
                noise.add(noiseRequest(random));
            }
            for (CompletableFuture<int[]> n : noise) {
                n.get(60, TimeUnit.SECONDS);
            }
            return collect(runs);
        }

        private CompletableFuture<int[]> noiseRequest(SplittableRandom random) {
            int[] prompt = random.ints(1 + random.nextInt(40), 3, m.model().config().vocabSize()).toArray();
            return submit(prompt, 1 + random.nextInt(30), SamplingParameters.temperature(1.0), random.nextLong());
        }

        /** {@code copies} submissions of each golden prompt at once; returns the first copy's ids after all agree. */
        List<int[]> copiesAtOnce(int copies) throws Exception {
            List<List<CompletableFuture<int[]>>> runs = new ArrayList<>();
            for (GreedyGolden g : m.goldens()) {
                List<CompletableFuture<int[]>> same = new ArrayList<>();
                for (int c = 0; c < copies; c++) {
                    same.add(submit(g.promptIds(), g.greedyIds().length, SamplingParameters.GREEDY, 0));
                }
                runs.add(same);
            }
            List<int[]> out = new ArrayList<>();
            for (List<CompletableFuture<int[]>> same : runs) {
                List<int[]> ids = collect(same);
                for (int[] copy : ids) {
                    assertArrayEquals(ids.getFirst(), copy, "every copy gets the same ids");
                }
                out.add(ids.getFirst());
            }
            assertTrue(engine.awaitIdle(Duration.ofSeconds(10)));
            return out;
        }

        private static List<int[]> collect(List<CompletableFuture<int[]>> runs) throws Exception {
            List<int[]> out = new ArrayList<>();
            for (CompletableFuture<int[]> r : runs) {
                out.add(r.get(60, TimeUnit.SECONDS));
            }
            return out;
        }

        @Override
        public void close() {
            engine.close();
        }
    }

    /** Collects the ids of one sequence. */
    private static final class Ids implements GenerationListener {
        final List<Integer> ids = new ArrayList<>();
        final CompletableFuture<int[]> done = new CompletableFuture<>();

        @Override
        public void onStep(SequenceDecoder.Step step) {
            if (step.choice() != null) {
                ids.add(step.choice().token());
            }
            if (step.finished()) {
                done.complete(ids.stream().mapToInt(Integer::intValue).toArray());
            }
        }

        @Override
        public void onError(RuntimeException error) {
            done.completeExceptionally(error);
        }
    }
}
