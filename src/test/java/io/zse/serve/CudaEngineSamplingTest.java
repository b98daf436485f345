package io.zse.serve;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.zse.TestModels;
import io.zse.backend.Backend;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cuda.CudaTestBackends;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.Sampler;
import io.zse.generate.EndConditions;
import io.zse.generate.SamplingParameters;
import io.zse.generate.SequenceDecoder;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The serving engine on the CUDA backend (the emulated library here) draws tokens on the device: only the ids of the
 * rows it samples come back, and a request that wants logprobs gets its own logits row. Greedy text is the CPU
 * backend's; seeded sampling repeats itself and is the CPU sampler's, and its first tokens over many seeds follow the
 * model's distribution (a chi-square test).
 */
class CudaEngineSamplingTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.libraryOnly();

    @TempDir
    static Path dir;
    private static ZseFile file;
    private static Tokenizer tokenizer;

    private static final String[] PROMPTS = {"Once upon a time", "The little dog ran to the park and", "Tom",
            "Lily had a red ball."};

    @BeforeAll
    static void open() throws Exception {
        if (backends.probe().usable()) {
            file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir));
            tokenizer = TokenizerSource.fromZse(file);
        }
    }

    @AfterAll
    static void close() {
        if (file != null) {
            file.close();
        }
    }

    private static CudaBackend cuda() {
        return new CudaBackend(backends.library(), backends.device());
    }

    /** What one request produced: its choices (null for the end-of-sequence step) and finish reason. */
    private record Outcome(List<Sampler.Choice> choices, String finish) {
        int[] ids() {
            return choices.stream().filter(c -> c != null).mapToInt(Sampler.Choice::token).toArray();
        }
    }

    private static final class Collected implements GenerationListener {
        final List<Sampler.Choice> choices = new ArrayList<>();
        final CompletableFuture<Outcome> outcome = new CompletableFuture<>();

        @Override
        public void onStep(SequenceDecoder.Step step) {
            choices.add(step.choice());
            if (step.finished()) {
                outcome.complete(new Outcome(choices, step.finish()));
            }
        }

        @Override
        public void onError(RuntimeException error) {
            outcome.completeExceptionally(error);
        }
    }

    /** Serves the requests together on one engine over {@code backend} and returns each one's outcome. */
    private static List<Outcome> serve(Backend backend, List<GenerationRequest> requests) throws Exception {
        LlamaModel model = LlamaModel.load(file, backend);
        EngineLimits limits = new EngineLimits(64, requests.size(), 0, 512);
        List<Collected> collected = new ArrayList<>();
        try (BatchingEngine engine = new BatchingEngine(model, tokenizer, limits, 32L << 20,
                new EngineMetrics(new SimpleMeterRegistry()))) {
            for (GenerationRequest request : requests) {
                Collected c = new Collected();
                engine.submit(request, c);
                collected.add(c);
            }
            List<Outcome> outcomes = new ArrayList<>();
            for (Collected c : collected) {
                outcomes.add(c.outcome.get(300, TimeUnit.SECONDS));
            }
            assertTrue(engine.awaitIdle(Duration.ofSeconds(10)));
            return outcomes;
        }
    }

    private static GenerationRequest request(String prompt, int maxTokens, SamplingParameters parameters, long seed,
                                             boolean logprobs) {
        return new GenerationRequest(tokenizer.encode(prompt, true), maxTokens, parameters, seed, List.of(), null,
                false, logprobs, EndConditions.DEFAULT);
    }

    @Test
    void greedyTokensDrawnOnTheDeviceAreTheCpuBackends() throws Exception {
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < PROMPTS.length; i++) {
            requests.add(request(PROMPTS[i], 12 + 6 * i, SamplingParameters.GREEDY, 0, false));
        }
        List<Outcome> onCpu;
        try (CpuBackend cpu = new CpuBackend(2)) {
            onCpu = serve(cpu, requests);
        }
        try (CudaBackend cuda = cuda()) {
            List<Outcome> onDevice = serve(cuda, requests);
            int tokens = 0;
            for (int i = 0; i < PROMPTS.length; i++) {
                assertArrayEquals(onCpu.get(i).ids(), onDevice.get(i).ids(), "greedy ids of prompt " + i);
                assertEquals(onCpu.get(i).finish(), onDevice.get(i).finish(), "finish of prompt " + i);
                for (Sampler.Choice c : onDevice.get(i).choices()) {
                    if (c != null) {
                        assertTrue(Float.isNaN(c.logprob()) && c.top().isEmpty(), "a device draw has no logprobs");
                        tokens++;
                    }
                }
            }
            assertTrue(cuda.drawnRows() >= tokens, cuda.drawnRows() + " rows drawn on the device for " + tokens
                    + " tokens");
            assertTrue(cuda.replayedPasses() > 0, "decode steps replayed as graphs");
        }
    }

    /**
     * Seeded requests of several samplers in one batch, beside one that wants logprobs (its own logits row comes back,
     * the others' do not): the device's tokens repeat from run to run and are those the CPU sampler draws.
     */
    @Test
    void seededSamplingRepeatsAndIsTheCpuSamplers() throws Exception {
        List<SamplingParameters> samplers = List.of(
                SamplingParameters.temperature(0.9).withTopK(40),
                SamplingParameters.temperature(1.0).withTopP(0.9),
                SamplingParameters.temperature(1.2).withMinP(0.05).withTopK(100),
                SamplingParameters.temperature(0.8).withTopK(20).withTopLogprobs(2));
        List<GenerationRequest> requests = new ArrayList<>();
        for (int i = 0; i < samplers.size(); i++) {
            requests.add(request(PROMPTS[i], 20, samplers.get(i), 1000 + i, i == 3));
        }
        List<Outcome> onCpu;
        try (CpuBackend cpu = new CpuBackend(2)) {
            onCpu = serve(cpu, requests);
        }
        try (CudaBackend cuda = cuda()) {
            List<Outcome> first = serve(cuda, requests);
            List<Outcome> second = serve(cuda, requests);
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(first.get(i).ids(), second.get(i).ids(), "request " + i + " run twice");
                assertArrayEquals(onCpu.get(i).ids(), first.get(i).ids(), "request " + i + ": CPU and device draws");
            }
            for (Sampler.Choice c : first.get(3).choices()) {
                if (c != null) {
                    assertFalse(Float.isNaN(c.logprob()), "logprobs asked for");
                    assertEquals(2, c.top().size());
                }
            }
            assertTrue(cuda.drawnRows() > 0, "nothing drawn on the device");
        }
    }

    /**
     * 400 seeds, one token each, from one prompt at temperature 1.1 and top-k 12: the device's draws must fit the
     * model's truncated softmax (computed on the CPU backend) by a chi-square test at p = 0.001. A device draw that
     * ignored the temperature, top-k or the uniform would fail it.
     */
    @Test
    void firstTokensOverManySeedsFollowTheModelsDistribution() throws Exception {
        int samples = 400;
        int topK = 12;
        double temperature = 1.1;
        SamplingParameters parameters = SamplingParameters.temperature(temperature).withTopK(topK);
        int[] prompt = tokenizer.encode("Once upon a time, there was a", true);
        float[] logits;
        try (CpuBackend cpu = new CpuBackend(2)) {
            LlamaModel model = LlamaModel.load(file, cpu);
            logits = model.forward(prompt, 0, new KvCache(model.newPool(io.zse.backend.KvCacheType.F32, 16, 4,
                    java.lang.foreign.Arena.ofAuto()), prompt.length));
        }
        double[] expected = truncatedSoftmax(logits, temperature, topK);

        List<GenerationRequest> requests = new ArrayList<>();
        for (int seed = 0; seed < samples; seed++) {
            requests.add(new GenerationRequest(prompt, 1, parameters, seed, List.of()));
        }
        int[] counts = new int[logits.length];
        try (CudaBackend cuda = cuda()) {
            for (Outcome o : serve(cuda, requests)) {
                int[] ids = o.ids();
                assertEquals(1, ids.length, "one token per request (the prompt's next is no end of text)");
                counts[ids[0]]++;
            }
            assertEquals(samples, cuda.drawnRows(), "every token drawn on the device");
        }
        // Bins with at least 5 expected draws; the rest of the vocabulary in one more bin.
        double chi = 0;
        int bins = 0;
        double restExpected = 0;
        int restCount = 0;
        for (int t = 0; t < logits.length; t++) {
            double e = expected[t] * samples;
            if (e >= 5) {
                chi += (counts[t] - e) * (counts[t] - e) / e;
                bins++;
            } else {
                restExpected += e;
                restCount += counts[t];
            }
        }
        if (restExpected > 0) {
            chi += (restCount - restExpected) * (restCount - restExpected) / Math.max(restExpected, 1e-9);
            bins++;
        }
        assertTrue(bins >= 4, "too few bins (" + bins + ") for the test to say anything");
        double critical = chiSquareQuantile999(bins - 1);
        assertTrue(chi < critical, "chi-square " + chi + " over " + (bins - 1) + " degrees of freedom, critical "
                + critical + "; counts " + Arrays.toString(Arrays.stream(counts).filter(c -> c > 0).toArray()));
    }

    /** The probabilities the sampler draws from: softmax(logits / temperature) over the k likeliest tokens. */
    private static double[] truncatedSoftmax(float[] logits, double temperature, int k) {
        Integer[] order = new Integer[logits.length];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> Float.compare(logits[b], logits[a]));
        double[] p = new double[logits.length];
        double max = logits[order[0]];
        double total = 0;
        for (int i = 0; i < k; i++) {
            p[order[i]] = Math.exp((logits[order[i]] - max) / temperature);
            total += p[order[i]];
        }
        for (int i = 0; i < k; i++) {
            p[order[i]] /= total;
        }
        return p;
    }

    /** The chi-square distribution's 0.999 quantile (Wilson–Hilferty; within 1 % from 3 degrees of freedom up). */
    private static double chiSquareQuantile999(int df) {
        double z = 3.090232;
        double a = 2.0 / (9 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }
}
