package io.zse.backend.cpu;

import io.zse.format.LittleEndian;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * TERNARY (BitNet b1.58) products on every kernel: the Vector API one, and each kernel set of libzse_cpu this CPU runs
 * (AVX-512 VNNI, AVX2, portable C), must give exactly the scalar reference's outputs (all sum Σ t·q exactly and finish
 * with the same float operations), and the reference must match BitNet's definition computed here in double: the
 * activations fake-quantized per row (round(x · 127 / absmax) · absmax / 127) times the dequantized weights t · s.
 */
public class TernaryKernelsTest {
    private static final CpuThreads THREADS = new CpuThreads(2);

    @AfterAll
    static void close() {
        THREADS.close();
    }

    /** rows (tile edges at 4), cols (blocks of 128), activation rows n. */
    static Stream<Arguments> shapes() {
        return Stream.of(Arguments.of(37, 128, 1), Arguments.of(37, 384, 5), Arguments.of(8, 256, 4),
                Arguments.of(3, 640, 2), Arguments.of(64, 1280, 1));
    }

    /** Codes uniform over {0, 1, 2}, a scale near BitNet's. */
    public static ZseTensor randomTernary(int rows, int cols, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] codes = new byte[rows * cols];
        for (int i = 0; i < codes.length; i++) {
            codes[i] = (byte) random.nextInt(3);
        }
        MemorySegment data = Arena.ofAuto().allocate(TensorType.TERNARY.dataBytes(codes.length));
        for (int b = 0; b < codes.length; b += TernaryBlocks.BLOCK) {
            TernaryBlocks.packBlock(codes, b, data, b / 4);
        }
        MemorySegment scales = Arena.ofAuto().allocate(4);
        scales.set(LittleEndian.FLOAT, 0, (float) random.nextDouble(0.5, 2.5));
        TensorInfo info = TensorInfo.planned("w", TensorType.TERNARY, new long[]{rows, cols}, TernaryBlocks.BLOCK);
        return new ZseTensor(info, data, scales);
    }

    static float[] activations(int n, int cols, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] x = new float[n * cols];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian() * (1 + i / cols); // rows of different magnitudes
        }
        return x;
    }

    private static float[] multiply(CpuWeight w, float[] x, int n) {
        float[] out = new float[n * w.rows()];
        w.multiply(x, n, out, THREADS);
        return out;
    }

    @ParameterizedTest(name = "[{0} x {1}] n={2}")
    @MethodSource("shapes")
    void referenceIsBitNetsProduct(int rows, int cols, int n) {
        ZseTensor t = randomTernary(rows, cols, rows * 31L + cols);
        float[] x = activations(n, cols, cols);
        float[] got = multiply(ScalarKernels.INSTANCE.weight(t), x, n);
        float[] w = new float[rows * cols];
        TensorDecoder.decode(TensorType.TERNARY, TernaryBlocks.BLOCK, t.data(), t.scales(), 0, w.length, w, 0);
        for (int i = 0; i < n; i++) {
            double absmax = 0;
            for (int k = 0; k < cols; k++) {
                absmax = Math.max(absmax, Math.abs(x[i * cols + k]));
            }
            float divisor = 127f / (float) absmax;
            for (int r = 0; r < rows; r++) {
                double want = 0;
                for (int k = 0; k < cols; k++) {
                    want += Math.rint(x[i * cols + k] * divisor) / divisor * w[r * cols + k];
                }
                assertEquals(want, got[i * rows + r], 1e-5 * Math.max(1, Math.abs(want)), "row " + r + " of x " + i);
            }
        }
    }

    @ParameterizedTest(name = "[{0} x {1}] n={2}")
    @MethodSource("shapes")
    void everyKernelMatchesTheReferenceExactly(int rows, int cols, int n) {
        ZseTensor t = randomTernary(rows, cols, rows * 17L + cols);
        float[] x = activations(n, cols, rows);
        float[] want = multiply(ScalarKernels.INSTANCE.weight(t), x, n);

        CpuWeight vector = TestKernels.named("vector").weight(t);
        assertInstanceOf(TernaryMatmul.class, vector);
        assertArrayEquals(want, multiply(vector, x, n), "vector kernel");
        for (int r = 0; r < rows; r++) {
            float[] row = new float[cols];
            float[] reference = new float[cols];
            vector.decodeRow(r, row, 0);
            TensorDecoder.decode(TensorType.TERNARY, TernaryBlocks.BLOCK, t.data(), t.scales(), (long) r * cols, cols,
                    reference, 0);
            assertArrayEquals(reference, row, "decoded row " + r);
            assertEquals(want[r], vector.dot(r, x, 0), "single-row dot " + r);
        }

        Optional<NativeCpuLibrary> library = NativeLibraryProbe.result().library();
        List<String> sets = library.map(NativeCpuLibrary::supported).orElse(List.of());
        List<String> ran = new ArrayList<>();
        try {
            for (String isa : sets) {
                library.get().use(isa);
                CpuWeight nativeWeight = new NativeWeight(t, library.get(), TestKernels.named("vector"));
                assertArrayEquals(want, multiply(nativeWeight, x, n), "native " + isa);
                ran.add(isa);
            }
        } finally {
            library.ifPresent(l -> l.use(l.supported().getFirst()));
        }
        System.out.printf("ternary [%d x %d] n=%d: vector and native %s match the scalar reference exactly%n", rows,
                cols, n, ran);
    }

    /** An all-zero activation row quantizes with absmax clamped to 1e-5 (as transformers does): zero output, no NaN. */
    @Test
    void zeroActivationsGiveZero() {
        ZseTensor t = randomTernary(8, 128, 3);
        float[] out = multiply(TestKernels.named("vector").weight(t), new float[128], 1);
        assertArrayEquals(new float[8], out);
    }
}
