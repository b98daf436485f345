package io.zse.model;

import io.zse.TestModels;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Batching must not change results: sequences decoded together, joining and leaving the batch at different steps
 * (as under continuous batching), produce the greedy ids each produces alone, and its logits up to float rounding
 * (a batch multiplies through the prefill kernel, one sequence through the fused matrix-vector one).
 */
class BatchedDecodeTest {
    private static final String[] PROMPTS = {
            "Once upon a time", "The little dog ran to the park and", "Lily had a red ball.", "Tom"};
    /** Step at which each sequence joins the running batch, and how many tokens it generates. */
    private static final int[] JOIN_STEP = {0, 0, 5, 12};
    private static final int[] LENGTH = {40, 24, 30, 20};

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F32", "Q8", "Q4", "NF4"})
    void sequencesDecodedTogetherMatchEachAlone(TensorType type) throws Exception {
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir)); CpuBackend backend = new CpuBackend(2)) {
            LlamaModel model = LlamaModel.load(file, backend);
            Tokenizer tokenizer = TokenizerSource.fromZse(file);
            int[][] prompts = Arrays.stream(PROMPTS).map(p -> tokenizer.encode(p, true)).toArray(int[][]::new);

            List<float[]>[] alone = new List[PROMPTS.length];
            for (int s = 0; s < PROMPTS.length; s++) {
                alone[s] = decodeAlone(model, prompts[s], LENGTH[s]);
            }
            List<float[]>[] together = decodeTogether(model, prompts);
            for (int s = 0; s < PROMPTS.length; s++) {
                assertArrayEquals(greedy(alone[s]), greedy(together[s]), "greedy ids of sequence " + s);
                for (int step = 0; step < LENGTH[s]; step++) {
                    assertArrayEquals(alone[s].get(step), together[s].get(step), 1e-4f,
                            "logits of sequence " + s + " at step " + step);
                }
            }
        }
    }

    /** The greedy step of a batch (what zse bench --batch runs) takes each row's argmax of decodeBatch's logits. */
    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"Q8"})
    void aGreedyBatchStepTakesEachRowsLargestLogit(TensorType type) throws Exception {
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir)); CpuBackend backend = new CpuBackend(2)) {
            LlamaModel model = LlamaModel.load(file, backend);
            Tokenizer tokenizer = TokenizerSource.fromZse(file);
            KvCache[] greedy = new KvCache[PROMPTS.length];
            KvCache[] logits = new KvCache[PROMPTS.length];
            int[] a = new int[PROMPTS.length];
            int[] b = new int[PROMPTS.length];
            for (int s = 0; s < PROMPTS.length; s++) {
                int[] prompt = tokenizer.encode(PROMPTS[s], true);
                greedy[s] = model.newCache(prompt.length + 8);
                logits[s] = model.newCache(prompt.length + 8);
                a[s] = argmax(model.forward(prompt, 0, greedy[s]));
                b[s] = argmax(model.forward(prompt, 0, logits[s]));
            }
            int vocab = model.config().vocabSize();
            for (int step = 0; step < 6; step++) {
                a = model.decodeBatchGreedy(a, greedy);
                float[] rows = model.decodeBatch(b, logits);
                for (int s = 0; s < b.length; s++) {
                    b[s] = argmax(Arrays.copyOfRange(rows, s * vocab, (s + 1) * vocab));
                }
                assertArrayEquals(b, a, "step " + step);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F32"})
    void aBatchCannotShareOneCache(TensorType type) throws Exception {
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir)); CpuBackend backend = new CpuBackend(1)) {
            LlamaModel model = LlamaModel.load(file, backend);
            KvCache cache = model.newCache(16);
            model.forward(new int[]{1, 2}, 0, cache);
            assertThrows(IllegalArgumentException.class, () -> model.decodeBatch(new int[]{3, 4}, new KvCache[]{cache, cache}));
            assertThrows(IllegalArgumentException.class, () -> model.decodeBatch(new int[]{3}, new KvCache[]{cache, cache}));
        }
    }

    /** Logits before each generated token: the prompt's last logits, then one forward per greedy token. */
    private static List<float[]> decodeAlone(LlamaModel model, int[] prompt, int length) {
        KvCache cache = model.newCache(prompt.length + length);
        List<float[]> logits = new ArrayList<>();
        logits.add(model.forward(prompt, 0, cache));
        while (logits.size() < length) {
            logits.add(model.forward(new int[]{argmax(logits.getLast())}, cache.length(), cache));
        }
        return logits;
    }

    @SuppressWarnings("unchecked")
    private static List<float[]>[] decodeTogether(LlamaModel model, int[][] prompts) {
        int sequences = prompts.length;
        List<float[]>[] logits = new List[sequences];
        KvCache[] caches = new KvCache[sequences];
        for (int step = 0; ; step++) {
            List<Integer> running = new ArrayList<>();
            for (int s = 0; s < sequences; s++) {
                if (JOIN_STEP[s] == step) { // joins: its prompt is prefilled alone, as a server admits a request
                    caches[s] = model.newCache(prompts[s].length + LENGTH[s]);
                    logits[s] = new ArrayList<>(List.of(model.forward(prompts[s], 0, caches[s])));
                } else if (logits[s] != null && logits[s].size() < LENGTH[s]) {
                    running.add(s);
                }
            }
            if (running.isEmpty() && step > Arrays.stream(JOIN_STEP).max().orElseThrow()) {
                return logits;
            }
            if (running.isEmpty()) {
                continue;
            }
            int[] tokens = running.stream().mapToInt(s -> argmax(logits[s].getLast())).toArray();
            KvCache[] batch = running.stream().map(s -> caches[s]).toArray(KvCache[]::new);
            float[] out = model.decodeBatch(tokens, batch);
            int vocab = model.config().vocabSize();
            for (int i = 0; i < running.size(); i++) {
                logits[running.get(i)].add(Arrays.copyOfRange(out, i * vocab, (i + 1) * vocab));
            }
        }
    }

    private static int[] greedy(List<float[]> logits) {
        return logits.stream().mapToInt(BatchedDecodeTest::argmax).toArray();
    }

    private static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }
}
