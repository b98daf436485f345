package io.zse.backend.cuda;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BackendArrays;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.backend.cpu.CpuBackend;
import io.zse.TestModels;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import io.zse.generate.Sampler;
import io.zse.model.LlamaModel;
import io.zse.model.RotaryFrequencies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.zse.backend.cuda.TestCudaLibrary.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fused kernels against the ops they replace: the residual add with the next RMSNorm
 * ({@code zse_cuda_add_rms_norm}) and RoPE in the KV write ({@code zse_cuda_rope_store_kv}) give, on the device, bit
 * for bit what the unfused kernels give, and the CPU backend's results within float rounding. Model-level parity (greedy
 * ids, graph capture and replay with the fused ops) is CudaGoldenTest's and CudaDecodeGraphTest's.
 */
class CudaFusionTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.cudaAndCpu();

    @TempDir
    static Path dir;

    private static void assertClose(float[] expected, float[] actual, String what) {
        assertEquals(expected.length, actual.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], actual[i], 2e-5 * Math.max(1, Math.abs(expected[i])), what + " element " + i);
        }
    }

    @Test
    void residualAddAndRmsNormInOneKernel() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        // widths of one to 32 threads' values, one not a multiple of anything, a full tile of 1024 threads and eight
        // values each, and more than a tile (read twice)
        for (int dim : new int[]{64, 256, 288, 1001, 8192, 8224}) {
            for (int n : new int[]{1, 3, 8}) {
                float[] x = random(n * dim, dim * 7L + n);
                float[] y = random(n * dim, dim * 11L + n);
                float[] weight = random(dim, dim);
                float eps = 1e-5f;
                float[] fused = BackendArrays.addRmsNorm(cuda, x, y, n, weight, eps);
                float[] added = BackendArrays.add(cuda, x, y);
                float[] normed = BackendArrays.rmsNorm(cuda, added, n, weight, eps);
                String what = "dim " + dim + " n " + n;
                assertArrayEquals(added, java.util.Arrays.copyOfRange(fused, 0, n * dim), what + ": the sum");
                assertArrayEquals(normed, java.util.Arrays.copyOfRange(fused, n * dim, 2 * n * dim), what + ": normed");
                assertClose(BackendArrays.addRmsNorm(cpu, x, y, n, weight, eps), fused, what + " against the CPU");
            }
        }
    }

    private static ActivationBuffer on(float[] values) {
        CudaBackend cuda = backends.cuda();
        ActivationBuffer buffer = cuda.allocate(values.length);
        cuda.write(values, buffer);
        return buffer;
    }

    private static float[] read(ActivationBuffer buffer, int count) {
        float[] values = new float[count];
        backends.cuda().read(buffer, values, count);
        return values;
    }

    /**
     * Norms and SwiGLU write their output's int8 form beside it where an integer product may take it next: the products
     * that do give, bit for bit, what they give when they quantize that input themselves, and launch no quantization
     * of their own; a write to the input in between makes the product quantize what is there then.
     */
    @Test
    void normsAndSwigluHandTheirInt8FormToTheNextProduct() {
        CudaBackend cuda = backends.cuda();
        normsHandTheirInt8FormToTheNextProduct(8224); // more than a tile: the second pass reads the row again
        int dim = 256;
        int ff = 512;
        int n = 3;
        normsHandTheirInt8FormToTheNextProduct(dim);
        WeightMatrix down = cuda.weight(TestCudaLibrary.randomWeight(TensorType.Q8, 32, dim, ff, 3));
        ActivationBuffer gate = on(random(n * ff, 8));
        ActivationBuffer up = on(random(n * ff, 9));
        ActivationBuffer projected = cuda.allocate(n * dim);
        long quantizations = cuda.quantizations();
        cuda.swiglu(gate, up, n * ff);
        cuda.matmul(gate, n, down, projected);
        assertEquals(quantizations, cuda.quantizations(), "SwiGLU's int8 form taken");
        // zse bench --profile waits for each op (Backend.finish): the wait is no op, the int8 form still taken
        io.zse.backend.ProfiledBackend profiled = new io.zse.backend.ProfiledBackend(cuda);
        profiled.swiglu(gate, up, n * ff);
        profiled.matmul(gate, n, down, projected);
        assertEquals(quantizations, cuda.quantizations(), "SwiGLU's int8 form taken across a wait");
        assertArrayEquals(BackendArrays.matmul(cuda, read(gate, n * ff), n, down), read(projected, n * dim), 0f,
                "down");
        for (ActivationBuffer b : new ActivationBuffer[]{gate, up, projected}) {
            b.close();
        }
    }

    /** The integer products' types and groups: Q4 g32 and g128, Q8, Q4_K, Q6_K. */
    private static final int[][] INTEGER_KINDS = {{TensorType.Q4.ordinal(), 32}, {TensorType.Q4.ordinal(), 128},
            {TensorType.Q8.ordinal(), 32}, {TensorType.Q4_K.ordinal(), 256}, {TensorType.Q6_K.ordinal(), 256}};

    /** A backend with every fusion on, whatever the environment's switches say. */
    private static CudaBackend fusing() {
        return new CudaBackend(backends.library(), backends.device(), true, true, null,
                IntegerProducts.Variants.DEFAULT);
    }

    /** The same with the projections' norms left to the products that read the stream (ZSE_CUDA_NORM=consumer). */
    private static CudaBackend consumerNorming() {
        return fusing(IntegerProducts.NormPlacement.CONSUMER, IntegerProducts.Variants.DEFAULT.swigluAhead());
    }

    /** Every fusion on, the norms placed by {@code norm}, SwiGLU's warps asking L2 {@code swigluAhead} groups ahead. */
    private static CudaBackend fusing(IntegerProducts.NormPlacement norm, int swigluAhead) {
        IntegerProducts.Variants d = IntegerProducts.Variants.DEFAULT;
        return new CudaBackend(backends.library(), backends.device(), true, true, null,
                new IntegerProducts.Variants(d.mmaRows(), d.productSplits(), d.rowWarps(), d.fusedSwiglu(), norm,
                        d.fusedRope(), d.int8Prompts(), swigluAhead));
    }

    /**
     * Projections that leave their norm to the products reading the stream (ZSE_CUDA_NORM=consumer: the add alone, then
     * gate and up products whose every block norms the stream into its shared memory), for each integer type, on
     * streams of one tile of the block, two (held) and three (read twice): the stream, the normed row (written by the
     * products' first block) and the SwiGLU output are bit for bit those of the projection that norms in its last
     * block. Where the next op does not norm its input (a plain product), the norm runs first, within rounding of that
     * one, and hands its int8 form on. Twice each, on other inputs.
     */
    @Test
    void projectionsLeaveTheirNormToTheProductsReadingTheStream() {
        try (CudaBackend producer = fusing(); CudaBackend consumer = consumerNorming()) {
            for (int[] kind : INTEGER_KINDS) {
                TensorType type = TensorType.values()[kind[0]];
                int cols = kind[1] == 256 ? 512 : 384;
                for (int dim : kind[1] == 256 ? new int[]{512, 2304, 4352} : new int[]{128, 2176, 4224}) {
                    ZseTensor w = TestCudaLibrary.randomWeight(type, kind[1], dim, cols, dim);
                    ZseTensor gate = TestCudaLibrary.randomWeight(type, kind[1], 96, dim, 11);
                    ZseTensor up = TestCudaLibrary.randomWeight(type, kind[1], 96, dim, 12);
                    ZseTensor next = TestCudaLibrary.randomWeight(TensorType.Q8, 32, 64, dim, 5);
                    float[] weight = random(dim, 6);
                    for (int round = 0; round < 2; round++) {
                        String what = type + " g" + kind[1] + " dim " + dim + ", round " + round;
                        float[] input = random(cols, 30 + round);
                        float[] residual = random(dim, 40 + round);
                        long taken = consumer.normsTakenByProducts();
                        float[][] expected = addNormThenSwiglu(producer, w, gate, up, input, residual, weight);
                        float[][] actual = addNormThenSwiglu(consumer, w, gate, up, input, residual, weight);
                        assertEquals(taken + 1, consumer.normsTakenByProducts(), what + ": taken by the products");
                        String[] parts = {"the stream", "the normed row", "SwiGLU"};
                        for (int i = 0; i < parts.length; i++) {
                            assertArrayEquals(expected[i], actual[i], 0f, what + ": " + parts[i]);
                        }
                        float[][] plain = addNormThenProduct(consumer, w, next, input, residual, weight);
                        assertArrayEquals(expected[0], plain[0], 0f, what + ": the stream before a plain product");
                        assertClose(expected[1], plain[1], what + ": normed before a plain product");
                        assertArrayEquals(BackendArrays.matmul(consumer, plain[1], 1, consumer.weight(next)),
                                plain[2], 0f, what + ": the plain product");
                    }
                }
            }
        }
    }

    /**
     * TinyStories (Q8 and Q4) decoding step after step, its decode steps recorded as graphs and replayed, with the
     * projections' norms left to the products reading the stream: every step's logits are bit for bit those with the
     * projections norming in their last block, and the q, k, v and gate/up launches took the norms.
     */
    @ParameterizedTest
    @ValueSource(strings = {"Q8", "Q4"})
    void tinyStoriesDecodesAlikeWithTheNormsInTheProducts(TensorType type) throws Exception {
        Path path = TestModels.convertTinyStories(type, Files.createDirectories(dir.resolve("norms-" + type)));
        try (ZseFile file = ZseFile.open(path); CudaBackend producer = fusing();
             CudaBackend consumer = consumerNorming()) {
            List<float[]> expected = decode(LlamaModel.load(file, producer));
            List<float[]> actual = decode(LlamaModel.load(file, consumer));
            assertEquals(expected.size(), actual.size());
            for (int step = 0; step < expected.size(); step++) {
                assertArrayEquals(expected.get(step), actual.get(step), 0f, type + ": logits of step " + step);
            }
            assertTrue(consumer.normsTakenByProducts() > 0, "no norm taken by the products");
            assertTrue(consumer.replayedPasses() > 0, "no replay");
        }
    }

    /** The logits of a 4-token prompt and of 10 greedy decode steps after it. */
    private static List<float[]> decode(LlamaModel model) {
        int[] prompt = {1, 400, 31, 7};
        KvCache cache = new KvCache(model.newPool(KvCacheType.F16, 16, 4, Arena.ofAuto()), 16);
        List<float[]> logits = new ArrayList<>();
        logits.add(model.forward(prompt, 0, cache));
        for (int step = 0; step < 10; step++) {
            int token = Sampler.argmax(logits.getLast());
            logits.add(model.forward(new int[]{token}, prompt.length + step, cache));
        }
        return logits;
    }

    /** The stream, the normed row and the SwiGLU output of one row: the projection with its norm, then gate and up. */
    private static float[][] addNormThenSwiglu(CudaBackend backend, ZseTensor w, ZseTensor gate, ZseTensor up,
                                               float[] input, float[] residual, float[] weight) {
        int dim = residual.length;
        int ff = (int) gate.shape()[0];
        try (ActivationBuffer x = backend.allocate(input.length); ActivationBuffer projected = backend.allocate(dim);
             ActivationBuffer stream = backend.allocate(dim); ActivationBuffer normed = backend.allocate(dim);
             ActivationBuffer g = backend.allocate(ff); ActivationBuffer u = backend.allocate(ff)) {
            WeightMatrix[] gateAndUp = {backend.weight(gate), backend.weight(up)}; // before: entering runs the norm
            backend.write(input, x);
            backend.write(residual, stream);
            backend.matmulAddRmsNorm(x, 1, backend.weight(w), projected, stream, weight, 1e-5f, normed);
            backend.swigluProducts(normed, 1, gateAndUp[0], gateAndUp[1], g, u);
            return new float[][]{read(backend, stream, dim), read(backend, normed, dim), read(backend, g, ff)};
        }
    }

    /**
     * The stream, the normed row and the next product's output of one row: the projection with its norm, then a plain
     * product of the normed row, which takes its int8 form (no quantization of its own).
     */
    private static float[][] addNormThenProduct(CudaBackend backend, ZseTensor w, ZseTensor next, float[] input,
                                                float[] residual, float[] weight) {
        int dim = residual.length;
        int outputs = (int) next.shape()[0];
        try (ActivationBuffer x = backend.allocate(input.length); ActivationBuffer projected = backend.allocate(dim);
             ActivationBuffer stream = backend.allocate(dim); ActivationBuffer normed = backend.allocate(dim);
             ActivationBuffer after = backend.allocate(outputs)) {
            WeightMatrix product = backend.weight(next);
            backend.write(input, x);
            backend.write(residual, stream);
            backend.matmulAddRmsNorm(x, 1, backend.weight(w), projected, stream, weight, 1e-5f, normed);
            long quantizations = backend.quantizations();
            backend.matmul(normed, 1, product, after);
            assertEquals(quantizations, backend.quantizations(), "the norm's int8 form taken");
            return new float[][]{read(backend, stream, dim), read(backend, normed, dim), read(backend, after, outputs)};
        }
    }

    /**
     * The gate and up products with SwiGLU applied as they finish (zse_cuda_swiglu_matvec, up to 8 rows), for each
     * integer type: the bits of the two products then SwiGLU; their int8 form taken by the down projection with no
     * quantization launch, giving the bits of quantizing the output anew; the same again on other inputs; and past 8
     * rows the separate ops (whose SwiGLU writes the int8 form). Rows of 4608 columns too, which the products split
     * among warps (a warp of the fused launch takes the shares one after another and must add them in the same order).
     * With each warp asking L2 for its rows 0, 1 and 2 groups ahead (ZSE_CUDA_SWIGLU_AHEAD; the emulation faults on an
     * address outside device memory).
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2})
    void swigluAppliedAsTheGateAndUpProductsFinish(int ahead) {
        try (CudaBackend backend = fusing(IntegerProducts.Variants.DEFAULT.norm(), ahead)) {
            for (int[] kind : INTEGER_KINDS) {
                swigluAppliedAsTheProductsFinish(backend, kind, kind[1] == 256 ? 512 : 384, new int[]{1, 2, 3, 8, 9});
                swigluAppliedAsTheProductsFinish(backend, kind, 4608, new int[]{1, 3});
            }
        }
    }

    private static void swigluAppliedAsTheProductsFinish(CudaBackend backend, int[] kind, int cols, int[] rows) {
        TensorType type = TensorType.values()[kind[0]];
        int ff = 96; // three blocks of 32 outputs, a thread block each
        WeightMatrix gate = backend.weight(TestCudaLibrary.randomWeight(type, kind[1], ff, cols, 11));
        WeightMatrix up = backend.weight(TestCudaLibrary.randomWeight(type, kind[1], ff, cols, 12));
        WeightMatrix down = backend.weight(TestCudaLibrary.randomWeight(TensorType.Q8, 32, 64, ff, 13));
        for (int n : rows) {
            String what = type + " g" + kind[1] + " cols=" + cols + " n=" + n;
            ActivationBuffer x = backend.allocate(n * cols);
            ActivationBuffer[] outs = {backend.allocate(n * ff), backend.allocate(n * ff)};
            ActivationBuffer projected = backend.allocate(n * 64);
            for (int round = 0; round < 2; round++) { // other inputs: a stale int8 form would show
                backend.write(random(n * cols, 20 + n + 100 * round), x);
                backend.matmuls(x, n, new WeightMatrix[]{gate, up}, outs);
                backend.swiglu(outs[0], outs[1], n * ff);
                float[] separate = read(backend, outs[0], n * ff);
                backend.swigluProducts(x, n, gate, up, outs[0], outs[1]);
                long quantizations = backend.quantizations();
                backend.matmul(outs[0], n, down, projected);
                float[] fused = read(backend, outs[0], n * ff);
                assertArrayEquals(separate, fused, 0f, what + ", round " + round);
                assertEquals(quantizations, backend.quantizations(), what + ": the int8 form taken");
                assertArrayEquals(BackendArrays.matmul(backend, fused, n, down),
                        read(backend, projected, n * 64), 0f, what + ": down, round " + round);
            }
            for (ActivationBuffer b : new ActivationBuffer[]{x, outs[0], outs[1], projected}) {
                b.close();
            }
        }
    }

    /**
     * An output or down projection that adds its outputs to the residual stream and norms it in its last block
     * (zse_cuda_integer_matvec_add_rms_norm, one row), for each integer type, on rows of 96, 2080 (two of the block's
     * tiles, held at once) and 4160 (three: read twice): the stream gets the bits of the product then the add; the
     * normed row the separate kernels' within rounding (the block sums the squares in its own order); its int8 form
     * taken by the next product, the bits of quantizing the normed row anew; twice, on other inputs (the counter left
     * at zero); at two rows the separate ops.
     */
    @Test
    void projectionsAddToTheStreamAndNormItInTheirLastBlock() {
        try (CudaBackend backend = fusing()) {
            for (int[] kind : INTEGER_KINDS) {
                TensorType type = TensorType.values()[kind[0]];
                int cols = kind[1] == 256 ? 512 : 384;
                for (int dim : new int[]{96, 2080, 4160}) {
                    WeightMatrix w = backend.weight(TestCudaLibrary.randomWeight(type, kind[1], dim, cols, dim));
                    WeightMatrix next = backend.weight(TestCudaLibrary.randomWeight(TensorType.Q8, 32, 64, dim, 5));
                    float[] weight = random(dim, 6);
                    for (int n : new int[]{1, 2}) {
                        String what = type + " g" + kind[1] + " dim " + dim + " n=" + n;
                        ActivationBuffer x = backend.allocate(n * cols);
                        ActivationBuffer projected = backend.allocate(n * dim);
                        ActivationBuffer stream = backend.allocate(n * dim);
                        ActivationBuffer normed = backend.allocate(n * dim);
                        ActivationBuffer after = backend.allocate(n * 64);
                        for (int round = 0; round < 2; round++) { // other inputs: a stale int8 form would show
                            float[] input = random(n * cols, 30 + round);
                            float[] residual = random(n * dim, 40 + round);
                            backend.write(input, x);
                            backend.write(residual, stream);
                            backend.matmul(x, n, w, projected);
                            backend.addRmsNorm(stream, projected, n, weight, 1e-5f, normed);
                            float[] separateStream = read(backend, stream, n * dim);
                            float[] separateNormed = read(backend, normed, n * dim);
                            backend.write(input, x);
                            backend.write(residual, stream);
                            backend.matmulAddRmsNorm(x, n, w, projected, stream, weight, 1e-5f, normed);
                            long quantizations = backend.quantizations();
                            backend.matmul(normed, n, next, after);
                            assertEquals(quantizations, backend.quantizations(), what + ": the int8 form taken");
                            float[] fusedNormed = read(backend, normed, n * dim);
                            assertArrayEquals(separateStream, read(backend, stream, n * dim), 0f,
                                    what + ": the stream, round " + round);
                            assertClose(separateNormed, fusedNormed, what + ": normed, round " + round);
                            assertArrayEquals(BackendArrays.matmul(backend, fusedNormed, n, next),
                                    read(backend, after, n * 64), 0f, what + ": next product, round " + round);
                        }
                        for (ActivationBuffer b : new ActivationBuffer[]{x, projected, stream, normed, after}) {
                            b.close();
                        }
                    }
                }
            }
        }
    }

    /**
     * The q, k and v products of one row rotating each pair of rows of a q or k head and writing the caches
     * (zse_cuda_qkv_rope_store_kv), for each integer type at a small shape (Q4 g32 also at Llama 3 8B's heads, and on
     * rows of 4608 columns, which the products split among warps), with both cache types: the bits of the products then
     * RoPE + KV write, in q, k (left unrotated), v and in the caches (attention over them gives the same bits); step
     * after step; and at two rows the separate ops.
     */
    @Test
    void qkvProductsRotateAndCacheEachPairOfRows() {
        try (CudaBackend backend = fusing()) {
            for (int[] kind : INTEGER_KINDS) {
                TensorType type = TensorType.values()[kind[0]];
                int base = kind[1] == 256 ? 512 : 384;
                AttentionShape small = new AttentionShape(8, 2, 64, 0);
                Map<AttentionShape, Integer> shapes = kind == INTEGER_KINDS[0]
                        ? Map.of(small, base, new AttentionShape(32, 8, 128, 0), base, new AttentionShape(4, 1, 64, 0),
                        4608)
                        : Map.of(small, base);
                for (Map.Entry<AttentionShape, Integer> shapeAndCols : shapes.entrySet()) {
                    AttentionShape shape = shapeAndCols.getKey();
                    int cols = shapeAndCols.getValue();
                    WeightMatrix[] qkv = {
                            backend.weight(TestCudaLibrary.randomWeight(type, kind[1], shape.queryDim(), cols, 21)),
                            backend.weight(TestCudaLibrary.randomWeight(type, kind[1], shape.kvDim(), cols, 22)),
                            backend.weight(TestCudaLibrary.randomWeight(type, kind[1], shape.kvDim(), cols, 23))};
                    float[] frequencies = RotaryFrequencies.of(shape.headDim(), 10000, null);
                    for (KvCacheType cacheType : new KvCacheType[]{KvCacheType.F32, KvCacheType.F16}) {
                        Side separate = Side.of(backend, shape, 1, cacheType);
                        Side fused = Side.of(backend, shape, 1, cacheType);
                        int[][][] steps = {{{0, 0, 1}}, {{0, 1, 1}}, {{0, 2, 2}}, {{0, 4, 1}}};
                        for (int[][] step : steps) {
                            String what = type + " g" + kind[1] + " " + shape + " cols " + cols + " " + cacheType
                                    + " at " + step[0][1] + " x " + step[0][2];
                            assertQkvRopeStoreKvMatches(backend, qkv, shape, frequencies, separate, fused, step,
                                    cols, what);
                        }
                    }
                }
            }
        }
    }

    private static void assertQkvRopeStoreKvMatches(CudaBackend backend, WeightMatrix[] qkv, AttentionShape shape,
                                                    float[] frequencies, Side separate, Side fused, int[][] step,
                                                    int cols, String what) {
        int n = step[0][2];
        BatchLayout a = separate.layout(step);
        BatchLayout b = fused.layout(step);
        ActivationBuffer x = backend.allocate(n * cols);
        backend.write(random(n * cols, step[0][1] * 7L + shape.headDim()), x);
        ActivationBuffer[][] outs = new ActivationBuffer[2][3];
        for (ActivationBuffer[] o : outs) {
            o[0] = backend.allocate(n * shape.queryDim());
            o[1] = backend.allocate(n * shape.kvDim());
            o[2] = backend.allocate(n * shape.kvDim());
        }
        for (int layer = 0; layer < 2; layer++) {
            backend.matmuls(x, n, qkv, outs[0]);
            backend.ropeQueriesAndStoreKv(outs[0][0], shape.numHeads(), outs[0][1], outs[0][2], a, layer,
                    shape.numKvHeads(), shape.headDim(), frequencies);
            backend.projectRopeStoreKv(x, n, qkv, outs[1][0], outs[1][1], outs[1][2], b, layer, shape.numHeads(),
                    shape.numKvHeads(), shape.headDim(), frequencies);
            int[] widths = {shape.queryDim(), shape.kvDim(), shape.kvDim()};
            for (int j = 0; j < 3; j++) {
                assertArrayEquals(read(backend, outs[0][j], n * widths[j]), read(backend, outs[1][j], n * widths[j]),
                        0f, what + ", layer " + layer + ": " + "qkv".charAt(j));
            }
            float[] queries = read(backend, outs[0][0], n * shape.queryDim());
            assertArrayEquals(BackendArrays.attention(backend, queries, a, layer, shape),
                    BackendArrays.attention(backend, queries, b, layer, shape), 0f,
                    what + ", layer " + layer + ": attention over the caches");
        }
        separate.advance(step);
        fused.advance(step);
        x.close();
        for (ActivationBuffer[] o : outs) {
            for (ActivationBuffer buffer : o) {
                buffer.close();
            }
        }
    }

    private static float[] read(Backend backend, ActivationBuffer from, int count) {
        float[] values = new float[count];
        backend.read(from, values, count);
        return values;
    }

    private static void normsHandTheirInt8FormToTheNextProduct(int dim) {
        CudaBackend cuda = backends.cuda();
        int n = 3;
        WeightMatrix query = cuda.weight(TestCudaLibrary.randomWeight(TensorType.Q4, 32, 64, dim, 1));
        WeightMatrix key = cuda.weight(TestCudaLibrary.randomWeight(TensorType.Q4, 32, 16, dim, 2));
        float[] weight = random(dim, 6);
        ActivationBuffer x = on(random(n * dim, 4));
        ActivationBuffer y = on(random(n * dim, 5));
        ActivationBuffer normed = cuda.allocate(n * dim);
        ActivationBuffer q = cuda.allocate(n * 64);
        ActivationBuffer k = cuda.allocate(n * 16);
        for (boolean residual : new boolean[]{true, false}) {
            long quantizations = cuda.quantizations();
            if (residual) {
                cuda.addRmsNorm(x, y, n, weight, 1e-5f, normed);
            } else {
                cuda.rmsNorm(x, n, weight, 1e-5f, normed);
            }
            cuda.matmuls(normed, n, new WeightMatrix[]{query, key}, new ActivationBuffer[]{q, k});
            assertEquals(quantizations, cuda.quantizations(),
                    "the norm's int8 form taken (residual " + residual + ", dim " + dim + ")");
            float[] values = read(normed, n * dim);
            assertArrayEquals(BackendArrays.matmul(cuda, values, n, query), read(q, n * 64), 0f, "q, " + residual);
            assertArrayEquals(BackendArrays.matmul(cuda, values, n, key), read(k, n * 16), 0f, "k, " + residual);
        }
        cuda.rmsNorm(x, n, weight, 1e-5f, normed);
        float[] other = random(n * dim, 7);
        cuda.write(other, normed);
        cuda.matmul(normed, n, query, q);
        assertArrayEquals(BackendArrays.matmul(cuda, other, n, query), read(q, n * 64), 0f,
                "after a write, dim " + dim);
        for (ActivationBuffer b : new ActivationBuffer[]{x, y, normed, q, k}) {
            b.close();
        }
    }

    /**
     * Attention over decode rows writes its output's int8 form too: the output projection that takes it launches no
     * quantization and gives what it gives on the F32 output, bit for bit; on one kernel, and on flash-decoding's
     * split and merge (a device reporting 132 multiprocessors splits a 300-position row 8 ways).
     */
    @Test
    void attentionHandsItsInt8OutputToTheOutputProjection() {
        CudaDevice emulated = backends.cuda().device();
        CudaDevice h100Sized = new CudaDevice(emulated.index(), emulated.name(), emulated.totalBytes(),
                emulated.freeBytes(), emulated.major(), emulated.minor(), 132);
        AttentionShape shape = new AttentionShape(8, 2, 64, 0);
        int prompt = 300;
        for (CudaDevice device : List.of(emulated, h100Sized)) {
            try (CudaBackend backend = new CudaBackend(backends.library(), device)) {
                WeightMatrix output = backend.weight(TestCudaLibrary.randomWeight(TensorType.Q4, 32, 24,
                        shape.queryDim(), 11));
                KvCache cache = new KvCache(KvCacheType.F32, 1, prompt + 1, shape.numKvHeads(), shape.headDim());
                BackendArrays.storeKv(backend, random(prompt * shape.kvDim(), 12), random(prompt * shape.kvDim(), 13),
                        BatchLayout.single(cache, 0, prompt), 0);
                BatchLayout step = BatchLayout.single(cache, prompt, 1);
                BackendArrays.storeKv(backend, random(shape.kvDim(), 14), random(shape.kvDim(), 15), step, 0);
                ActivationBuffer q = backend.allocate(shape.queryDim());
                backend.write(random(shape.queryDim(), 16), q);
                ActivationBuffer attended = backend.allocate(shape.queryDim());
                ActivationBuffer projected = backend.allocate(24);
                long quantizations = backend.quantizations();
                backend.attention(q, step, 0, shape, attended);
                backend.matmul(attended, 1, output, projected);
                String what = device.multiprocessors() + " multiprocessors";
                assertEquals(quantizations, backend.quantizations(), what + ": the attention's int8 output taken");
                float[] values = new float[shape.queryDim()];
                backend.read(attended, values, values.length);
                float[] expected = BackendArrays.matmul(backend, values, 1, output);
                float[] actual = new float[24];
                backend.read(projected, actual, 24);
                assertArrayEquals(expected, actual, 0f, what);
                for (ActivationBuffer b : new ActivationBuffer[]{q, attended, projected}) {
                    b.close();
                }
            }
        }
    }

    /** A pool and its sequences on one backend, given the same allocations as the others so the slots agree. */
    private record Side(Backend backend, List<KvCache> caches) {
        static Side of(Backend backend, AttentionShape shape, int sequences) {
            return of(backend, shape, sequences, KvCacheType.F32);
        }

        static Side of(Backend backend, AttentionShape shape, int sequences, KvCacheType type) {
            KvBlockPool pool = new KvBlockPool(type, 2, shape.numKvHeads(), shape.headDim(), 4, 64, Arena.ofAuto());
            List<KvCache> caches = new ArrayList<>();
            for (int i = 0; i < sequences; i++) {
                caches.add(new KvCache(pool, 120));
            }
            return new Side(backend, caches);
        }

        BatchLayout layout(int[][] segments) {
            List<BatchLayout.Segment> list = new ArrayList<>();
            int rows = 0;
            for (int[] s : segments) {
                if (!caches.get(s[0]).reserve(s[1] + s[2])) {
                    throw new IllegalStateException("pool exhausted");
                }
                list.add(new BatchLayout.Segment(caches.get(s[0]), s[1], rows, s[2]));
                rows += s[2];
            }
            return new BatchLayout(list);
        }

        void advance(int[][] segments) {
            for (int[] s : segments) {
                caches.get(s[0]).setLength(s[1] + s[2]);
            }
        }
    }

    /**
     * Keys rotated in the KV write: a prompt batch of three sequences (blocks interleaved, rows at block boundaries),
     * then a decode step and a step mixing a prompt chunk with decode rows, two layers each (the second with the
     * queries rotated by the same launch); attention over what was written must be the same bit for bit as after rope
     * then store_kv, and the CPU backend's within rounding.
     */
    @Test
    void ropeInTheKvWrite() {
        CudaBackend cuda = backends.cuda();
        CpuBackend cpu = backends.cpu();
        // the last is Llama 3 8B's: 2048 query pairs, which a row's 8 blocks share
        for (AttentionShape shape : List.of(new AttentionShape(8, 2, 64, 0), new AttentionShape(4, 4, 32, 0),
                new AttentionShape(2, 1, 256, 0), new AttentionShape(32, 8, 128, 0))) {
            float[] frequencies = RotaryFrequencies.of(shape.headDim(), 10000, null);
            Side unfused = Side.of(cuda, shape, 3);
            Side fused = Side.of(cuda, shape, 3);
            Side host = Side.of(cpu, shape, 3);
            int[][][] steps = {
                    {{0, 0, 7}, {1, 0, 4}, {2, 0, 1}},
                    {{0, 7, 1}, {1, 4, 1}, {2, 1, 1}},
                    {{1, 5, 6}, {0, 8, 1}, {2, 2, 1}}};
            long seed = 0;
            for (int[][] step : steps) {
                BatchLayout a = unfused.layout(step);
                BatchLayout b = fused.layout(step);
                BatchLayout c = host.layout(step);
                for (int layer = 0; layer < 2; layer++) {
                    seed++;
                    float[] k = random(a.rows() * shape.kvDim(), seed * 31);
                    float[] v = random(a.rows() * shape.kvDim(), seed * 37);
                    float[] q = random(a.rows() * shape.queryDim(), seed * 41);
                    float[] rotated = BackendArrays.rope(cuda, k, a, shape.numKvHeads(), shape.headDim(), frequencies);
                    BackendArrays.storeKv(cuda, rotated, v, a, layer);
                    float[] queries = BackendArrays.rope(cuda, q, a, shape.numHeads(), shape.headDim(), frequencies);
                    String what = shape + " step " + seed + " layer " + layer;
                    float[] fusedQueries;
                    if (layer == 0) { // the keys alone, and the queries by the same launch
                        BackendArrays.ropeStoreKv(cuda, k, v, b, layer, shape.numKvHeads(), shape.headDim(),
                                frequencies);
                        fusedQueries = queries;
                    } else {
                        fusedQueries = BackendArrays.ropeQueriesAndStoreKv(cuda, q, shape.numHeads(), k, v, b, layer,
                                shape.numKvHeads(), shape.headDim(), frequencies);
                        assertArrayEquals(queries, fusedQueries, what + ": the queries rotated by the same launch");
                    }
                    float[] hostQueries = BackendArrays.ropeQueriesAndStoreKv(cpu, q, shape.numHeads(), k, v, c,
                            layer, shape.numKvHeads(), shape.headDim(), frequencies);
                    float[] expected = BackendArrays.attention(cuda, queries, a, layer, shape);
                    float[] actual = BackendArrays.attention(cuda, fusedQueries, b, layer, shape);
                    assertArrayEquals(expected, actual, what + ": fused and unfused on the device");
                    assertClose(BackendArrays.attention(cpu, hostQueries, c, layer, shape), actual,
                            what + " against the CPU");
                }
                unfused.advance(step);
                fused.advance(step);
                host.advance(step);
            }
        }
    }
}
