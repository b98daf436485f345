package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TinyStories-656K through the CPU backend against transformers' greedy output
 * (golden/tinystories-656k-greedy-f32.json, made by tools/reference/tinystories_greedy.py).
 */
class LlamaModelGoldenTest {
    private static final double LOGIT_TOLERANCE = 1e-4;

    @TempDir
    static Path dir;
    static JsonNode golden;
    static CpuBackend backend;
    static ZseFile file;
    static LlamaModel model;

    @BeforeAll
    static void readGolden() throws IOException {
        try (InputStream in = LlamaModelGoldenTest.class.getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        backend = new CpuBackend(2);
        file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir));
        model = LlamaModel.load(file, backend);
    }

    @AfterAll
    static void close() {
        file.close();
        backend.close();
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
        KvCache cache = model.newCache(prompt.length + count);
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

    @Test
    void f32ReproducesTransformersGreedyIdsAndLogits() {
        double maxDiff = 0;
        for (JsonNode c : golden.get("cases")) {
            maxDiff = Math.max(maxDiff, GreedyGolden.of(c).assertReproducedBy(model, LOGIT_TOLERANCE));
        }
        System.out.printf("TinyStories-656K F32: max |logit - transformers| = %.2e%n", maxDiff);
    }

    static int[] topIds(float[] logits, int k) {
        Integer[] ids = new Integer[logits.length];
        Arrays.setAll(ids, i -> i);
        Arrays.sort(ids, (a, b) -> Float.compare(logits[b], logits[a]));
        return Arrays.stream(ids, 0, k).mapToInt(Integer::intValue).toArray();
    }

    @Test
    void batchedPrefillMatchesTokenByToken() {
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
