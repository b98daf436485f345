package io.zse.model;

import io.zse.generate.Sampler;
import com.fasterxml.jackson.databind.JsonNode;
import io.zse.TestModels;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cuda.CudaTestBackends;
import io.zse.backend.cuda.CudaDevice;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Decode steps recorded as CUDA graphs and replayed ({@link CudaBackend#pass}), driven as the engine drives them:
 * sequences join and leave a running batch over one block pool, so the batch moves between size buckets (padded rows
 * included) and its positions cross flash-decoding's split classes. The device reports an H100's 132 multiprocessors,
 * so small batches split attention over the sequence as on a GPU. Every step's logits must be bit for bit those of
 * the same steps run op by op on the same device, and on TinyStories the greedy ids those of the CPU backend.
 */
class CudaDecodeGraphTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.libraryOnly();

    @TempDir
    static Path dir;

    /** When each sequence joins (a decode step number), how many ids it generates, and its prompt. */
    private record Schedule(int[] joinAt, int[] budget, int[][] prompts) {
    }

    /** What a run produced: each sequence's greedy ids, and the logits of every decode step in order. */
    private record Run(int[][] ids, List<float[]> stepLogits) {
    }

    @Test
    void tinyStoriesWithSequencesJoiningAndLeaving() throws IOException {
        JsonNode cases = ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json").get("cases");
        int[][] prompts = new int[6][];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = LlamaModelGoldenTest.ints(cases.get((i + 3) % cases.size()).get("prompt_ids"));
        }
        // batch sizes 1..5 (buckets 1, 2, 4, 8) and one sequence reaching 66 positions (1 and 2 splits)
        Schedule schedule = new Schedule(new int[]{0, 0, 3, 7, 12, 13}, new int[]{58, 12, 24, 9, 16, 20}, prompts);
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir.resolve("f32")));
             CudaBackend direct = new CudaBackend(library(), h100Sized(), false);
             CudaBackend graphs = new CudaBackend(library(), h100Sized(), true);
             CpuBackend cpu = new CpuBackend(2, TestKernels.named("vector"))) {
            Run expected = run(LlamaModel.load(file, direct), schedule);
            Run actual = run(LlamaModel.load(file, graphs), schedule);
            assertSameSteps(expected, actual);
            assertTrue(graphs.replayedPasses() > 30, graphs.replayedPasses() + " replays");
            Run onCpu = run(LlamaModel.load(file, cpu), schedule);
            for (int i = 0; i < prompts.length; i++) {
                assertArrayEquals(onCpu.ids()[i], actual.ids()[i], "sequence " + i + ": CPU and CUDA graph ids");
            }
        }
    }

    /**
     * The greedy batch step of zse bench --batch: ids drawn on the device (only they come back), the steps replayed as
     * one recorded graph, the CPU backend's ids.
     */
    @Test
    void greedyBatchStepsDrawOnTheDevice() throws IOException {
        JsonNode cases = ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json").get("cases");
        int[][] prompts = new int[4][];
        for (int i = 0; i < prompts.length; i++) {
            prompts[i] = LlamaModelGoldenTest.ints(cases.get(i % cases.size()).get("prompt_ids"));
        }
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir.resolve("f32-batch")));
             CudaBackend graphs = new CudaBackend(library(), h100Sized(), true);
             CpuBackend cpu = new CpuBackend(2, TestKernels.named("vector"))) {
            int[][] onCuda = greedyBatch(LlamaModel.load(file, graphs), prompts, 10);
            assertEquals(4L * 9, graphs.drawnRows(), "rows drawn on the device");
            assertTrue(graphs.replayedPasses() > 0, "no replay");
            assertArrayEquals(greedyBatch(LlamaModel.load(file, cpu), prompts, 10), onCuda);
        }
    }

    /** Each prompt's greedy ids, the prompts decoded together from one block pool for {@code steps} steps. */
    private static int[][] greedyBatch(LlamaModel model, int[][] prompts, int steps) {
        try (Arena arena = Arena.ofShared()) {
            KvBlockPool pool = model.newPool(KvCacheType.F32, KvCache.DEFAULT_BLOCK_SIZE, prompts.length * 16, arena);
            KvCache[] caches = new KvCache[prompts.length];
            int[][] ids = new int[prompts.length][steps];
            int[] tokens = new int[prompts.length];
            for (int i = 0; i < prompts.length; i++) {
                caches[i] = new KvCache(pool, prompts[i].length + steps);
                tokens[i] = Sampler.argmax(model.forward(prompts[i], 0, caches[i]));
                ids[i][0] = tokens[i];
            }
            for (int step = 1; step < steps; step++) {
                tokens = model.decodeBatchGreedy(tokens, caches);
                for (int i = 0; i < prompts.length; i++) {
                    ids[i][step] = tokens[i];
                }
            }
            return ids;
        }
    }

    /**
     * Tiny architecture checkpoints in a short run: an untied output projection, and a sliding window. (The others'
     * vocabularies of 128K and 151K rows take minutes per run under the emulation; CudaGoldenTest covers them.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"llama-untied", "mistral-sliding-window"})
    void eachArchitecture(String name) throws IOException {
        JsonNode golden = ArchitectureGoldenTest.read("/golden/architectures/" + name + ".json");
        GreedyGolden run = GreedyGolden.of(golden);
        int[] prompt = run.promptIds();
        int[][] prompts = {prompt, Arrays.copyOf(prompt, Math.max(1, prompt.length - 2)), new int[]{prompt[0]},
                Arrays.copyOf(prompt, Math.max(1, prompt.length - 1))};
        // three rows (bucket 4, one padding row), then two, then three again: the second visit replays
        Schedule schedule = new Schedule(new int[]{0, 0, 0, 3}, new int[]{7, 3, 6, 4}, prompts);
        try (ZseFile file = ZseFile.open(ArchitectureGoldenTest.converted(name, golden, run, dir));
             CudaBackend direct = new CudaBackend(library(), h100Sized(), false);
             CudaBackend graphs = new CudaBackend(library(), h100Sized(), true)) {
            Run expected = run(LlamaModel.load(file, direct), schedule);
            Run actual = run(LlamaModel.load(file, graphs), schedule);
            assertSameSteps(expected, actual);
            assertArrayEquals(Arrays.copyOf(run.greedyIds(), 7), actual.ids()[0], "the first sequence's golden ids");
            assertTrue(graphs.replayedPasses() > 0, "no replay");
        }
    }

    private static void assertSameSteps(Run expected, Run actual) {
        assertEquals(expected.stepLogits().size(), actual.stepLogits().size(), "decode steps");
        for (int step = 0; step < expected.stepLogits().size(); step++) {
            assertArrayEquals(expected.stepLogits().get(step), actual.stepLogits().get(step), "step " + step + " logits");
        }
        for (int i = 0; i < expected.ids().length; i++) {
            assertArrayEquals(expected.ids()[i], actual.ids()[i], "sequence " + i);
        }
    }

    /**
     * Greedy decoding of the schedule: at each step the sequences due to join run their prompt, then every running
     * sequence that still has ids to generate decodes one token, all in one batch over a shared pool.
     */
    private static Run run(LlamaModel model, Schedule s) {
        int count = s.prompts().length;
        KvBlockPool pool = model.newPool(KvCacheType.F32, 16, 64, Arena.ofAuto());
        KvCache[] caches = new KvCache[count];
        List<List<Integer>> ids = new ArrayList<>(); // per sequence, null until it joins
        for (int i = 0; i < count; i++) {
            ids.add(null);
        }
        List<float[]> stepLogits = new ArrayList<>();
        int vocab = model.config().vocabSize();
        for (int step = 0; ; step++) {
            boolean waiting = false;
            for (int i = 0; i < count; i++) {
                if (s.joinAt()[i] == step) {
                    caches[i] = new KvCache(pool, s.prompts()[i].length + s.budget()[i]);
                    ids.set(i, new ArrayList<>(List.of(Sampler.argmax(model.forward(s.prompts()[i], 0, caches[i])))));
                }
                waiting |= s.joinAt()[i] > step;
            }
            List<Integer> running = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                if (caches[i] != null && generated(ids, i) < s.budget()[i]) {
                    running.add(i);
                } else if (caches[i] != null && caches[i].blocks() > 0) {
                    caches[i].release(); // left the batch: its blocks go back to the pool for the next ones
                }
            }
            if (running.isEmpty() && !waiting) {
                break;
            }
            if (running.isEmpty()) {
                continue;
            }
            int[] tokens = new int[running.size()];
            KvCache[] batch = new KvCache[running.size()];
            for (int r = 0; r < tokens.length; r++) {
                List<Integer> mine = ids.get(running.get(r));
                tokens[r] = mine.getLast();
                batch[r] = caches[running.get(r)];
            }
            float[] logits = model.decodeBatch(tokens, batch);
            stepLogits.add(logits);
            for (int r = 0; r < tokens.length; r++) {
                ids.get(running.get(r)).add(Sampler.argmax(logits, r * vocab, vocab));
            }
        }
        int[][] result = new int[count][];
        for (int i = 0; i < count; i++) {
            result[i] = ids.get(i).stream().mapToInt(Integer::intValue).toArray();
        }
        return new Run(result, stepLogits);
    }

    private static int generated(List<List<Integer>> ids, int sequence) {
        return ids.get(sequence) == null ? 0 : ids.get(sequence).size();
    }

    private static io.zse.backend.cuda.CudaLibrary library() {
        return backends.library();
    }

    /** The emulated device as an H100 would report its multiprocessors, so flash-decoding splits small batches. */
    private static CudaDevice h100Sized() {
        CudaDevice emulated = backends.device();
        return new CudaDevice(emulated.index(), emulated.name(), emulated.totalBytes(), emulated.freeBytes(),
                emulated.major(), emulated.minor(), 132);
    }
}
