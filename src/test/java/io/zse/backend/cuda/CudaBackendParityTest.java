package io.zse.backend.cuda;

import io.zse.TestModels;
import io.zse.backend.AttentionShape;
import io.zse.backend.BackendArrays;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import io.zse.generate.Sampler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static io.zse.backend.cuda.TestCudaLibrary.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every CUDA kernel against the CPU backend on the same inputs, on the library {@link TestCudaLibrary} picks: the CPU
 * emulation in every build, the real one on a GPU machine. Greedy decoding end to end: io.zse.model.CudaGoldenTest.
 */
class CudaBackendParityTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.cudaAndCpu();

    /** The types of the integer products (CudaBackend). */
    private static final java.util.Set<TensorType> INTEGER_TYPES = java.util.EnumSet.of(TensorType.Q8, TensorType.Q4,
            TensorType.Q4_K, TensorType.Q6_K);

    @TempDir
    static Path dir;

    /** No NaN, and every element within tolerance x the largest CPU magnitude (summation order differs). */
    static void assertClose(float[] expected, float[] actual, double tolerance, String what) {
        double scale = 1e-6;
        for (float e : expected) {
            scale = Math.max(scale, Math.abs(e));
        }
        for (int i = 0; i < expected.length; i++) {
            assertFalse(Float.isNaN(actual[i]), what + ": NaN at " + i);
            assertEquals(expected[i], actual[i], tolerance * scale, what + " at " + i);
        }
    }

    /** Random weights of one type and width with these row counts (TestCudaLibrary.randomWeight, seeds group, 7, 8). */
    private static ZseTensor[] randomWeights(TensorType type, int group, int cols, int... rows) {
        long[] seeds = {group, 7, 8};
        ZseTensor[] tensors = new ZseTensor[rows.length];
        for (int j = 0; j < rows.length; j++) {
            tensors[j] = TestCudaLibrary.randomWeight(type, group, rows[j], cols, seeds[j]);
        }
        return tensors;
    }

    private static WeightMatrix[] uploaded(CudaBackend backend, ZseTensor[] tensors) {
        WeightMatrix[] on = new WeightMatrix[tensors.length];
        for (int j = 0; j < tensors.length; j++) {
            on[j] = backend.weight(tensors[j]);
        }
        return on;
    }

    private static int[] allRows(int rows) {
        int[] ids = new int[rows];
        for (int i = 0; i < rows; i++) {
            ids[i] = i;
        }
        return ids;
    }

    /** x [n, cols] . w^T [rows, cols] in double, every operand first rounded to F16 (or BF16) as the MMA tiles are. */
    private static float[] roundedProduct(float[] x, int n, float[] w, int rows, int cols, boolean bf16) {
        float[] out = new float[n * rows];
        for (int t = 0; t < n; t++) {
            for (int r = 0; r < rows; r++) {
                double sum = 0;
                for (int k = 0; k < cols; k++) {
                    sum += (double) round(x[t * cols + k], bf16) * round(w[r * cols + k], bf16);
                }
                out[t * rows + r] = (float) sum;
            }
        }
        return out;
    }

    private static float round(float v, boolean bf16) {
        if (!bf16) {
            return Float.float16ToFloat(Float.floatToFloat16(v));
        }
        int bits = Float.floatToRawIntBits(v);
        bits += 0x7fff + ((bits >>> 16) & 1); // to nearest even (no NaN here)
        return Float.intBitsToFloat(bits & 0xffff0000);
    }

    /**
     * GGUF's Q5 and K-quants (imported bit for bit): random code bytes and scale records (F16 d and dmin finite), 2
     * rows per 16 of 256 or 512 columns, through the element-decoding vector kernel, the tensor-core tiles and the
     * embedding lookup.
     */
    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"Q4_K", "Q5_K", "Q6_K", "Q5"})
    void ggufTypesMatchTheCpu(TensorType type) {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        java.util.SplittableRandom random = new java.util.SplittableRandom(type.ordinal());
        for (long[] shape : new long[][]{{24, 256}, {7, 512}}) {
            TensorInfo info = TensorInfo.planned("model.layers.0.mlp.up_proj.weight", type, shape,
                    type.defaultGroupSize());
            byte[] data = new byte[(int) info.dataLength()];
            random.nextBytes(data);
            byte[] scales = new byte[(int) info.scalesLength()];
            random.nextBytes(scales);
            int record = type == TensorType.Q5 ? 4 : type == TensorType.Q6_K ? 18 : 16;
            for (int at = 0; at < scales.length; at += record) {
                scales[at + 1] = (byte) (0x20 | (scales[at + 1] & 0x83)); // d: a finite F16, about 1e-3
                if (type != TensorType.Q6_K) {
                    scales[at + 3] = (byte) (0x20 | (scales[at + 3] & 0x83)); // dmin, or Q5's m
                }
            }
            ZseTensor tensor = new ZseTensor(info, MemorySegment.ofArray(data), MemorySegment.ofArray(scales));
            assertMatmulAndEmbeddingMatch(type, info.name(), cpu.weight(tensor), cuda.weight(tensor));
        }
    }

    /**
     * The integer products on rows long enough for every lane to take whole steps of several chunks and a remainder
     * (168 chunks of 32), Q4 in groups of 32, 64 and 128, Q8, Q4_K and Q6_K, at each kernel's row count (DP4A up to 8,
     * int8 tensor cores in tiles of 16, 32 and 64 tokens; Q6_K, whose 21 super-blocks a row do not stage, in DP4A
     * launches of 16 rows) and on the F16 tensor-core tiles past 64 (ZSE_CUDA_PROMPT_PRODUCTS=f16; the staged prompts
     * are stagedTensorCoreBlocksMatchTheCpu's); weights that share an input in one launch give what separate calls
     * give, bit for bit, also when a weight of another type splits them.
     */
    @Test
    void integerProductsOnLongRowsAndSharedInputs() {
        try (CudaBackend f16Prompts = new CudaBackend(backends.library(), backends.device(), true,
                true, null, new IntegerProducts.Variants(0, 0, 0, true,
                IntegerProducts.NormPlacement.PRODUCER, true, false, 0))) {
            integerProductsOnLongRowsAndSharedInputs(f16Prompts);
        }
    }

    private void integerProductsOnLongRowsAndSharedInputs(CudaBackend f16Prompts) {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        int cols = 21 * 256; // 168 chunks of 32: a step of 4 x 32 and 40 more; whole K-quant super-blocks
        WeightMatrix f16OnGpu = cuda.weight(TestCudaLibrary.randomWeight(TensorType.F16, 0, 4, cols, 99));
        for (int[] kind : new int[][]{{TensorType.Q4.ordinal(), 32}, {TensorType.Q4.ordinal(), 64},
                {TensorType.Q4.ordinal(), 128}, {TensorType.Q8.ordinal(), 32}, {TensorType.Q4_K.ordinal(), 256},
                {TensorType.Q6_K.ordinal(), 256}}) {
            TensorType type = TensorType.values()[kind[0]];
            int group = kind[1];
            ZseTensor[] tensors = randomWeights(type, group, cols, 9, 3, 5);
            WeightMatrix[] onGpu = uploaded(cuda, tensors);
            WeightMatrix onCpu = cpu.weight(tensors[0]);
            for (int n : new int[]{1, 2, 4, 7, 9, 16, 24, 33, 64}) {
                String what = type + " g" + group + " n=" + n;
                float[] x = random(n * cols, 100 + n);
                long staged = cuda.stagedLaunches();
                float[] alone = BackendArrays.matmul(cuda, x, n, onGpu[0]);
                assertEquals(staged + (n > 8 && type != TensorType.Q6_K ? 1 : 0), cuda.stagedLaunches(),
                        what + ": staged launches (Q6_K: 21 super-blocks a row, not runs of 8)");
                assertClose(BackendArrays.matmul(cpu, TestKernels.int8Activations(x), n, onCpu), alone, 1e-5, what);
                float[][] shared = BackendArrays.matmuls(cuda, x, n, onGpu);
                float[][] split = BackendArrays.matmuls(cuda, x, n, onGpu[0], f16OnGpu, onGpu[1], onGpu[2]);
                for (int j = 0; j < tensors.length; j++) {
                    float[] separate = j == 0 ? alone : BackendArrays.matmul(cuda, x, n, onGpu[j]);
                    assertArrayEquals(separate, shared[j], 0f, what + ": weight " + j + " in one launch");
                    assertArrayEquals(separate, split[j == 0 ? 0 : j + 1], 0f, what + ": weight " + j + " after F16");
                }
                assertArrayEquals(BackendArrays.matmul(cuda, x, n, f16OnGpu), split[1], 0f, what + ": the F16 one");
            }
            int n = QuantizedActivations.MAX_ROWS + 4; // the F16 tensor-core tiles (ZSE_CUDA_PROMPT_PRODUCTS=f16)
            float[] x = random(n * cols, 200);
            float[] decoded = BackendArrays.embed(cpu, onCpu, allRows(onCpu.rows()));
            assertClose(roundedProduct(x, n, decoded, onCpu.rows(), cols, false),
                    BackendArrays.matmul(f16Prompts, x, n, uploaded(f16Prompts, tensors)[0]), 1e-5,
                    type + " g" + group + " n=" + n);
        }
    }

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F32", "F16", "BF16", "Q8", "Q4", "NF4"})
    void matmulAndEmbeddingMatchTheCpuForEveryStorageType(TensorType type) throws IOException {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir.resolve(type.name())))) {
            for (TensorInfo info : file.tensors()) {
                if (info.rank() != 2) {
                    continue;
                }
                assertMatmulAndEmbeddingMatch(type, info.name(), cpu.weight(file.tensor(info.name())),
                        cuda.weight(file.tensor(info.name())));
            }
        }
    }

    /**
     * The prefill tiles of both sizes, forced by the multiprocessor count the backend is told (one: 128 x 128 tiles
     * always; a million: 64 x 64), on 150 activation rows and 200 weight rows, which end inside a tile of either
     * size, and rows of 96 and 104 columns (the last step partial): the exact product of the F16-rounded operands.
     */
    @Test
    void prefillTilesOfBothSizesGiveTheRoundedProduct() {
        CpuBackend cpu = backends.cpu();
        CudaDevice d = backends.device();
        int n = 150;
        int rows = 200;
        for (int multiprocessors : new int[]{1, 1_000_000}) {
            CudaDevice told = new CudaDevice(d.index(), d.name(), d.totalBytes(), d.freeBytes(), d.major(), d.minor(),
                    multiprocessors);
            try (CudaBackend backend = new CudaBackend(backends.library(), told)) {
                for (Object[] weight : new Object[][]{{TensorType.Q4, 32, 96}, {TensorType.Q8, 32, 96},
                        {TensorType.F16, 0, 104}}) {
                    TensorType type = (TensorType) weight[0];
                    int cols = (int) weight[2];
                    ZseTensor tensor = TestCudaLibrary.randomWeight(type, (int) weight[1], rows, cols, cols);
                    float[] decoded = BackendArrays.embed(cpu, cpu.weight(tensor), allRows(rows));
                    float[] x = random(n * cols, multiprocessors);
                    assertClose(roundedProduct(x, n, decoded, rows, cols, false),
                            BackendArrays.matmul(backend, x, n, backend.weight(tensor)), 1e-5,
                            type + " on " + multiprocessors + " multiprocessors");
                }
            }
        }
    }

    /**
     * The integer products' tensor-core blocks of 16 weight rows (ZSE_CUDA_MMA_ROWS=16, three blocks a multiprocessor up
     * to 32 activation rows): Q4, Q8 and Q4_K at 9, 16, 24 and 33 rows against the CPU's product of the int8
     * activations, three weights of 200, 130 and 9 rows in one launch, so that blocks straddle the weights.
     */
    @Test
    void sixteenRowTensorCoreBlocksMatchTheCpu() {
        CpuBackend cpu = backends.cpu();
        try (CudaBackend backend = new CudaBackend(backends.library(), backends.device(), true,
                true, null, new IntegerProducts.Variants(16, 0, 0, true,
                IntegerProducts.NormPlacement.PRODUCER, true, true, 0))) {
            for (int[] kind : new int[][]{{TensorType.Q4.ordinal(), 32}, {TensorType.Q8.ordinal(), 32},
                    {TensorType.Q4_K.ordinal(), 256}}) {
                TensorType type = TensorType.values()[kind[0]];
                // 41 blocks of 32, which the warps do not split evenly; Q4_K: whole super-blocks
                int cols = type == TensorType.Q4_K ? 1280 : 1312;
                ZseTensor[] tensors = randomWeights(type, kind[1], cols, 200, 130, 9);
                WeightMatrix[] onGpu = uploaded(backend, tensors);
                for (int n : new int[]{9, 16, 24, 33}) {
                    float[] x = random(n * cols, 300 + n);
                    float[] int8 = TestKernels.int8Activations(x);
                    float[][] products = BackendArrays.matmuls(backend, x, n, onGpu);
                    for (int j = 0; j < tensors.length; j++) {
                        assertClose(BackendArrays.matmul(cpu, int8, n, cpu.weight(tensors[j])), products[j], 1e-5,
                                type + " n=" + n + " weight " + j + " in blocks of 16 rows");
                    }
                }
            }
        }
    }

    /**
     * The staged tensor-core products (the default from 9 activation rows): Q4 with groups of 32, 64 and 128, Q8 and
     * Q4_K at 9, 16, 24, 33 and 64 rows against the CPU's product of the int8 activations, on 5 stages of 256 columns
     * split into 1, 2 (of 2 and 3 stages) and 5 parts (8 asked), three weights of 200, 130 and 9 rows in one launch, so
     * that blocks of 64 rows straddle the weights and end past the last. Q6_K on 8 stages (its shortest staged row),
     * whose scale records start at each even byte of their 16-byte copies, split into 1, 2 and 8 parts. One launch
     * after another on the same split counters: one left behind would spoil the next launch's sums. Prompts of 65 and
     * 130 rows take them too, in tiles of 64 tokens (the last of 1 and 2), in one split whatever is asked; with
     * ZSE_CUDA_PROMPT_PRODUCTS=f16, not.
     */
    @Test
    void stagedTensorCoreBlocksMatchTheCpu() {
        CpuBackend cpu = backends.cpu();
        for (int splits : new int[]{1, 2, 8}) {
            try (CudaBackend backend = new CudaBackend(backends.library(), backends.device(), true,
                    true, null, new IntegerProducts.Variants(0, splits, 0, true,
                IntegerProducts.NormPlacement.PRODUCER, true, true, 0))) {
                for (int[] kind : new int[][]{{TensorType.Q4.ordinal(), 32}, {TensorType.Q4.ordinal(), 64},
                        {TensorType.Q4.ordinal(), 128}, {TensorType.Q8.ordinal(), 32},
                        {TensorType.Q4_K.ordinal(), 256}, {TensorType.Q6_K.ordinal(), 256}}) {
                    TensorType type = TensorType.values()[kind[0]];
                    int cols = type == TensorType.Q6_K ? LaunchShapes.Q6_K_STAGED_COLS : 5 * LaunchShapes.STAGE_COLS;
                    ZseTensor[] tensors = randomWeights(type, kind[1], cols, 200, 130, 9);
                    WeightMatrix[] onGpu = uploaded(backend, tensors);
                    for (int n : new int[]{9, 16, 24, 33, 64, 65, 130}) {  // above 64: a prompt, in tiles of 64
                        if (n == 130 && splits != 1) {
                            continue;  // prompts take one split whatever is asked: 65 rows show it
                        }
                        float[] x = random(n * cols, 500 + n + splits);
                        float[] int8 = TestKernels.int8Activations(x);
                        long staged = backend.stagedLaunches();
                        float[][] products = BackendArrays.matmuls(backend, x, n, onGpu);
                        assertEquals(staged + 1, backend.stagedLaunches(), type + " n=" + n + ": one staged launch");
                        for (int j = 0; j < tensors.length; j++) {
                            assertClose(BackendArrays.matmul(cpu, int8, n, cpu.weight(tensors[j])), products[j],
                                    1e-5, type + "/" + kind[1] + " n=" + n + " weight " + j + ", " + splits
                                            + " splits asked");
                        }
                    }
                }
            }
        }
        try (CudaBackend f16Prompts = new CudaBackend(backends.library(), backends.device(), true,
                true, null, new IntegerProducts.Variants(0, 0, 0, true,
                IntegerProducts.NormPlacement.PRODUCER, true, false, 0))) {
            int cols = 2 * LaunchShapes.STAGE_COLS;
            ZseTensor[] tensors = randomWeights(TensorType.Q4, 32, cols, 70);
            BackendArrays.matmuls(f16Prompts, random(70 * cols, 7), 70, uploaded(f16Prompts, tensors));
            assertEquals(0, f16Prompts.stagedLaunches(), "a prompt on the F16 tiles");
        }
    }

    /**
     * A device that gives a block 99 KB of shared memory (sm_86, sm_89; emulated with ZSE_CUDA_EMU_SHARED_KB) cannot
     * hold Q8's or Q6_K's 64-token stages (117 and 108 KB): their staged products of 33 to 64 rows and of prompts run
     * in tiles of 32 tokens there, split or not, and give the bits of the 64-token tiles. (They once skipped the
     * launch and reported success: the outputs kept what was in them.) Q4's 64-token stages (96 KB) still fit.
     */
    @Test
    void stagedProductsFitADeviceWithLessSharedMemory() {
        for (int splits : new int[]{1, 2}) {
            IntegerProducts.Variants variants = new IntegerProducts.Variants(0, splits, 0, true,
                    IntegerProducts.NormPlacement.PRODUCER, true, true, 0);
            try (CudaBackend backend = new CudaBackend(backends.library(), backends.device(), true, true, null,
                    variants)) {
                for (int[] kind : new int[][]{{TensorType.Q8.ordinal(), 32}, {TensorType.Q6_K.ordinal(), 256},
                        {TensorType.Q4.ordinal(), 32}}) {
                    TensorType type = TensorType.values()[kind[0]];
                    int cols = type == TensorType.Q6_K ? LaunchShapes.Q6_K_STAGED_COLS : 3 * LaunchShapes.STAGE_COLS;
                    WeightMatrix[] onGpu = uploaded(backend, randomWeights(type, kind[1], cols, 130, 9));
                    for (int n : new int[]{33, 64, 65, 100}) {
                        float[] x = random(n * cols, 900 + n + splits);
                        float[][] fitting = BackendArrays.matmuls(backend, x, n, onGpu);
                        float[][] smaller;
                        TestCudaLibrary.setNativeEnvironment("ZSE_CUDA_EMU_SHARED_KB", "99");
                        try {
                            smaller = BackendArrays.matmuls(backend, x, n, onGpu);
                        } finally {
                            TestCudaLibrary.setNativeEnvironment("ZSE_CUDA_EMU_SHARED_KB", null);
                        }
                        for (int j = 0; j < onGpu.length; j++) {
                            assertArrayEquals(fitting[j], smaller[j], 0f, type + " n=" + n + ", " + splits
                                    + " splits asked, weight " + j + ": 99 KB of shared memory a block");
                        }
                    }
                }
            }
        }
    }

    /**
     * The DP4A products with each weight row split among 1, 2, 4 and 8 warps (ZSE_CUDA_ROW_WARPS), and as the row's
     * length picks: 1 to 16 activation rows (Q6_K's 16-row launches too) on rows of 40 to 44 blocks of 32, which not
     * every split divides evenly (Q4_K, Q6_K: 5 super-blocks), three weights of 13, 6 and 3 rows in one launch, so
     * that a block's rows straddle the weights and end past the last; each against the CPU's product of the int8 activations.
     */
    @Test
    void rowsSplitAmongWarpsMatchTheCpu() {
        CpuBackend cpu = backends.cpu();
        for (int warps : new int[]{1, 2, 4, 8, 0}) {
            try (CudaBackend backend = new CudaBackend(backends.library(), backends.device(), true,
                    true, null, new IntegerProducts.Variants(0, 0, warps, true,
                IntegerProducts.NormPlacement.PRODUCER, true, true, 0))) {
                for (int[] kind : new int[][]{{TensorType.Q4.ordinal(), 32}, {TensorType.Q4.ordinal(), 128},
                        {TensorType.Q8.ordinal(), 32}, {TensorType.Q4_K.ordinal(), 256},
                        {TensorType.Q6_K.ordinal(), 256}}) {
                    TensorType type = TensorType.values()[kind[0]];
                    int cols = type == TensorType.Q4_K || type == TensorType.Q6_K ? 1280
                            : kind[1] == 128 ? 1408 : 1376;
                    ZseTensor[] tensors = randomWeights(type, kind[1], cols, 13, 6, 3);
                    WeightMatrix[] onGpu = uploaded(backend, tensors);
                    for (int n : new int[]{1, 2, 3, 8, 16}) {
                        if (n > 8 && type != TensorType.Q6_K) {
                            continue;  // the tensor cores'
                        }
                        float[] x = random(n * cols, 400 + n);
                        float[] int8 = TestKernels.int8Activations(x);
                        float[][] products = BackendArrays.matmuls(backend, x, n, onGpu);
                        for (int j = 0; j < tensors.length; j++) {
                            assertClose(BackendArrays.matmul(cpu, int8, n, cpu.weight(tensors[j])), products[j], 1e-5,
                                    type + " g" + kind[1] + " n=" + n + " weight " + j + ", " + warps + " warps a row");
                        }
                    }
                }
            }
        }
    }

    /**
     * Products with 1 to 70 activation rows (vector kernels, their batch limits, tensor-core tiles) and embedding rows.
     * Q8, Q4, Q4_K and Q6_K up to 64 rows are integer products: the CPU's product of the activations as int8 codes
     * give.
     */
    private static void assertMatmulAndEmbeddingMatch(TensorType type, String name, WeightMatrix onCpu,
                                                      WeightMatrix onGpu) {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        boolean integer = INTEGER_TYPES.contains(onGpu.type()); // by the tensor's type: embeddings may be Q8
        float[] decoded = null;
        for (int n : new int[]{1, 2, 3, 8, 9, 16, 17, 70}) {
            float[] x = random(n * onCpu.cols(), n);
            float[] actual = BackendArrays.matmul(cuda, x, n, onGpu);
            if (integer && (n <= QuantizedActivations.MAX_ROWS || stagedPrompt(onGpu))) {
                float[] expected = BackendArrays.matmul(cpu, TestKernels.int8Activations(x), n, onCpu);
                assertClose(expected, actual, 1e-5, type + " " + name + " n=" + n + " (int8 activations)");
            } else if (n > 8 && type != TensorType.F32) {
                // Tensor cores: both tiles rounded to F16 (BF16 weights: BF16), so the CPU's product is
                // only approached; the exact product of the rounded operands is what the kernel computes.
                decoded = decoded != null ? decoded : BackendArrays.embed(cpu, onCpu, allRows(onCpu.rows()));
                float[] rounded = roundedProduct(x, n, decoded, onCpu.rows(), onCpu.cols(),
                        type == TensorType.BF16);
                assertClose(rounded, actual, 1e-5, type + " " + name + " n=" + n + " (rounded operands)");
                assertClose(BackendArrays.matmul(cpu, x, n, onCpu), actual, 1e-2, type + " " + name + " n=" + n);
            } else {
                assertClose(BackendArrays.matmul(cpu, x, n, onCpu), actual, 1e-4, type + " " + name + " n=" + n);
            }
        }
        int[] tokens = {0, onCpu.rows() - 1, onCpu.rows() / 2};
        float[] expected = BackendArrays.embed(cpu, onCpu, tokens);
        float[] actual = BackendArrays.embed(cuda, onGpu, tokens);
        assertArrayEquals(expected, actual, 0f, type + " embedding rows of " + name);
    }

    /** Whether prompts times w take the staged int8 products (whole stages of 256 columns; Q6_K's runs of 8). */
    private static boolean stagedPrompt(WeightMatrix w) {
        return w.cols() % LaunchShapes.stagedColumns(w.type()) == 0;
    }

    /**
     * BitNet's TERNARY weights: each activation row quantized to int8 as BitLinear does, the integer product exact; the
     * same outputs as the CPU's for 1 to 70 activation rows (one kernel for all), and embedding rows.
     */
    @Test
    void ternaryWeightsMatchTheCpu() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (int[] shape : new int[][]{{24, 256}, {7, 640}}) {
            var tensor = io.zse.backend.cpu.TernaryKernelsTest.randomTernary(shape[0], shape[1], shape[1]);
            WeightMatrix onCpu = cpu.weight(tensor);
            WeightMatrix onGpu = cuda.weight(tensor);
            for (int n : new int[]{1, 3, 8, 9, 70}) {
                float[] x = random(n * shape[1], n);
                assertClose(BackendArrays.matmul(cpu, x, n, onCpu), BackendArrays.matmul(cuda, x, n, onGpu), 1e-5,
                        "TERNARY " + shape[0] + " x " + shape[1] + " n=" + n);
            }
            int[] tokens = {0, shape[0] - 1};
            assertArrayEquals(BackendArrays.embed(cpu, onCpu, tokens), BackendArrays.embed(cuda, onGpu, tokens), 0f,
                    "TERNARY embedding rows");
        }
    }

    @Test
    void elementwiseOpsMatchTheCpu() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        int n = 5;
        int dim = 96;
        float[] x = random(n * dim, 1);
        float[] weight = random(dim, 2);
        assertClose(BackendArrays.rmsNorm(cpu, x, n, weight, 1e-5f), BackendArrays.rmsNorm(cuda, x, n, weight, 1e-5f),
                1e-5, "rmsNorm");

        float[] frequencies = random(dim / 4, 3);
        BatchLayout at1000 = BatchLayout.single(new KvCache(KvCacheType.F32, 1, 1000 + n, 1, 2), 1000, n);
        assertClose(BackendArrays.rope(cpu, x, at1000, 2, dim / 2, frequencies),
                BackendArrays.rope(cuda, x, at1000, 2, dim / 2, frequencies), 1e-4, "rope at position 1000");

        float[] up = random(n * dim, 4);
        assertClose(BackendArrays.swiglu(cpu, x, up), BackendArrays.swiglu(cuda, x, up), 1e-6, "swiglu");
        float[] a = BackendArrays.add(cpu, x, up);
        float[] b = BackendArrays.add(cuda, x, up);
        assertArrayEquals(a, b, 0f, "add");
        assertArrayEquals(BackendArrays.scale(cpu, x, 2.25f), BackendArrays.scale(cuda, x, 2.25f), 0f, "scale");
        assertArrayEquals(BackendArrays.addBias(cpu, a, n, weight), BackendArrays.addBias(cuda, b, n, weight), 0f,
                "addBias");
    }

    /** What Qwen3 and Phi-3 ask of the kernels: each head normalised in place; rows rotated in runs, two tables. */
    @Test
    void perHeadNormInPlaceAndRopeOfRowRunsMatchTheCpu() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        int heads = 4;
        int headDim = 32;
        int n = 6;
        float[] x = random(n * heads * headDim, 6);
        float[] weight = random(headDim, 7);
        assertClose(BackendArrays.rmsNormInPlace(cpu, x, n * heads, weight, 1e-6f),
                BackendArrays.rmsNormInPlace(cuda, x, n * heads, weight, 1e-6f), 1e-5, "per-head rmsNorm in place");

        // two sequences: rows 0..3 at positions 14..17, rows 4..5 at 30..31; runs of 2, 3 and 1 rows
        BatchLayout batch = new BatchLayout(List.of(
                new BatchLayout.Segment(new KvCache(KvCacheType.F32, 1, 64, 1, 2), 14, 0, 4),
                new BatchLayout.Segment(new KvCache(KvCacheType.F32, 1, 64, 1, 2), 30, 4, 2)));
        int[] bounds = {0, 2, 5, 6};
        float[][] tables = {random(headDim / 2, 8), random(headDim / 2, 9), random(headDim / 2, 10)};
        float[] expected = BackendArrays.ropeInRuns(cpu, x, batch, heads, headDim, bounds, tables);
        assertClose(expected, BackendArrays.ropeInRuns(cuda, x, batch, heads, headDim, bounds, tables), 1e-4,
                "rope in runs");
        float[] firstRunOnly = BackendArrays.ropeInRuns(cuda, x, batch, heads, headDim, new int[]{0, 2},
                new float[][]{tables[0]});
        int rotated = 2 * heads * headDim;
        assertArrayEquals(Arrays.copyOfRange(x, rotated, x.length), Arrays.copyOfRange(firstRunOnly, rotated, x.length),
                0f, "rows after the run are left alone");
    }

    @Test
    void attentionMatchesTheCpuForDecodeAndPrefillWithGqaAndWindows() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        for (int window : new int[]{0, 7}) {
            for (int headDim : new int[]{32, 64, 128, 256}) {
                AttentionShape shape = new AttentionShape(8, 2, headDim, window);
                int prompt = 37;
                KvCache cpuCache = new KvCache(KvCacheType.F32, 1, 64, shape.numKvHeads(), shape.headDim());
                KvCache gpuCache = new KvCache(KvCacheType.F32, 1, 64, shape.numKvHeads(), shape.headDim());
                for (int[] step : new int[][]{{0, prompt}, {prompt, 1}, {prompt + 1, 1}, {20, 3}}) { // prefill, decode, rewind
                    int start = step[0];
                    int n = step[1];
                    float[] k = random(n * shape.kvDim(), 10L + start);
                    float[] v = random(n * shape.kvDim(), 20L + start);
                    float[] q = random(n * shape.queryDim(), 30L + start);
                    BatchLayout onCpu = BatchLayout.single(cpuCache, start, n);
                    BatchLayout onGpu = BatchLayout.single(gpuCache, start, n);
                    BackendArrays.storeKv(cpu, k, v, onCpu, 0);
                    BackendArrays.storeKv(cuda, k, v, onGpu, 0);
                    float[] expected = BackendArrays.attention(cpu, q, onCpu, 0, shape);
                    float[] actual = BackendArrays.attention(cuda, q, onGpu, 0, shape);
                    assertClose(expected, actual, 1e-4, "attention head dim " + headDim + " window " + window
                            + " at " + start + " n=" + n);
                }
            }
        }
    }

    @Test
    void argmaxAndTopKOrderLikeTheCpu() {
        CudaBackend cuda = backends.cuda();
        float[] logits = random(3 * 1000, 5);
        logits[1000 + 17] = 9f;
        logits[1000 + 3] = 9f; // tie: the lower id wins
        logits[2000 + 5] = Float.NaN;
        logits[2000 + 6] = 8f;
        assertArrayEquals(new int[]{Sampler.argmax(logits, 0, 1000), 3, 6}, cuda.argmax(logits, 3, 1000));
        int[] top = cuda.topK(java.util.Arrays.copyOfRange(logits, 1000, 2000), 1000, 4);
        assertEquals(3, top[0]);
        assertEquals(17, top[1]);
        assertTrue(logits[1000 + top[2]] >= logits[1000 + top[3]]);
    }
}
