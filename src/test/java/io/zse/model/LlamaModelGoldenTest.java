package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TinyStories-656K through the CPU backend, on each kernel family (vector and scalar), against transformers' greedy
 * output (golden/tinystories-656k-greedy-f32.json, made by tools/reference/tinystories_greedy.py).
 */
class LlamaModelGoldenTest {
    private static final double LOGIT_TOLERANCE = 1e-4;

    @TempDir
    static Path dir;
    static JsonNode golden;
    static ZseFile file;
    static final Map<String, CpuBackend> BACKENDS = new ConcurrentHashMap<>();

    @BeforeAll
    static void readGolden() throws IOException {
        try (InputStream in = LlamaModelGoldenTest.class.getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir));
    }

    @AfterAll
    static void close() {
        file.close();
        BACKENDS.values().forEach(CpuBackend::close);
    }

    /** The F32 model on the kernel family named (loading is O(header): weights stay in the mapped file). */
    static LlamaModel model(String kernels) {
        return LlamaModel.load(file, BACKENDS.computeIfAbsent(kernels, k -> TestKernels.backend(k, 2)));
    }

    static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /** Greedy decoding: prefill the prompt as one batch, then one token at a time. Returns ids, logits per position. */
    static int[] greedy(LlamaModel model, int[] prompt, int count, List<float[]> logitsByStep) {
        return greedy(model, prompt, count, logitsByStep, KvCacheType.F32);
    }

    static int[] greedy(LlamaModel model, int[] prompt, int count, List<float[]> logitsByStep, KvCacheType type) {
        KvCache cache = model.newCache(prompt.length + count, type);
        float[] logits = model.forward(prompt, 0, cache);
        int[] ids = new int[count];
        for (int i = 0; i < count; i++) {
            logitsByStep.add(logits);
            ids[i] = argmax(logits);
            if (i + 1 < count) {
                logits = model.forward(new int[]{ids[i]}, prompt.length + i, cache);
            }
        }
        return ids;
    }

    @ParameterizedTest
    @ValueSource(strings = {"vector", "scalar"})
    void f32ReproducesTransformersGreedyIdsAndLogits(String kernels) {
        LlamaModel model = model(kernels);
        double maxDiff = 0;
        for (JsonNode c : golden.get("cases")) {
            maxDiff = Math.max(maxDiff, GreedyGolden.of(c).assertReproducedBy(model, LOGIT_TOLERANCE));
        }
        System.out.printf("TinyStories-656K F32, %s kernels: max |logit - transformers| = %.2e%n", kernels, maxDiff);
    }

    static int[] topIds(float[] logits, int k) {
        Integer[] ids = new Integer[logits.length];
        Arrays.setAll(ids, i -> i);
        Arrays.sort(ids, (a, b) -> Float.compare(logits[b], logits[a]));
        return Arrays.stream(ids, 0, k).mapToInt(Integer::intValue).toArray();
    }

    @ParameterizedTest
    @ValueSource(strings = {"vector", "scalar"})
    void batchedPrefillMatchesTokenByToken(String kernels) {
        LlamaModel model = model(kernels);
        int[] tokens = ints(golden.get("cases").get(3).get("prompt_ids"));
        int vocab = model.config().vocabSize();
        float[] batched = model.forwardAll(tokens, 0, model.newCache(16));
        KvCache cache = model.newCache(16);
        for (int i = 0; i < tokens.length; i++) {
            float[] single = model.forward(new int[]{tokens[i]}, i, cache);
            float[] row = Arrays.copyOfRange(batched, i * vocab, (i + 1) * vocab);
            for (int t = 0; t < vocab; t++) {
                assertEquals(single[t], row[t], 1e-4 * Math.max(1, Math.abs(single[t])), "position " + i + " token " + t);
            }
        }
    }

    @Test
    void rejectsMoreTokensThanTheContextOrCacheHolds() {
        LlamaModel model = model("vector");
        int context = model.config().contextLength();
        assertThrows(IllegalArgumentException.class, () -> model.newCache(context + 1));
        KvCache cache = model.newCache(4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> model.forward(new int[]{1, 2, 3, 4, 5}, 0, cache));
        assertTrue(e.getMessage().contains("KV cache capacity of 4"), e.getMessage());
        KvCache full = model.newCache(context);
        full.setLength(context - 1);
        e = assertThrows(IllegalArgumentException.class, () -> model.forward(new int[]{1, 2}, context - 1, full));
        assertTrue(e.getMessage().contains("context length of " + context), e.getMessage());
    }
}
