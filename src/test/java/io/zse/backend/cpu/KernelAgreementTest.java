package io.zse.backend.cpu;

import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.KvRows;
import io.zse.convert.ConvertOptions;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The scalar kernels against the vector kernels, weight type by weight type and on every KV cache type: both read the
 * same bytes, so they may differ only by float rounding (summation order, fused multiply-adds). Random matrices cover
 * every type and group size; the real TinyStories-656K tensors, converted to each, cover real value ranges.
 */
class KernelAgreementTest {
    private static final CpuThreads THREADS = new CpuThreads(2);
    private static final CpuKernels VECTOR = TestKernels.named("vector");
    private static final CpuKernels SCALAR = TestKernels.named("scalar");

    @AfterAll
    static void close() {
        THREADS.close();
    }

    @ParameterizedTest(name = "{0} g={1}")
    @CsvSource({"F32, 0", "F16, 0", "BF16, 0", "Q8, 32", "Q4, 32", "Q4, 64", "Q4, 128", "NF4, 64"})
    void randomMatricesOfEveryTypeAgree(TensorType type, int groupSize) {
        ZseTensor tensor = MatmulTest.randomTensor(type, groupSize, 29, 384, 7L * groupSize + type.ordinal());
        assertTrue(assertKernelsAgree(tensor) > 0);
    }

    @ParameterizedTest(name = "TinyStories {0} g={1}")
    @CsvSource({"F32, 0", "F16, 0", "BF16, 0", "Q8, 32", "Q4, 32", "Q4, 64", "Q4, 128", "NF4, 64"})
    void realTinyStoriesTensorsAgree(TensorType type, int groupSize, @TempDir Path dir) throws IOException {
        Path zse = TestModels.convert(TestModels.tinyStories(), new ConvertOptions(type, groupSize, null, null, false),
                dir.resolve("tinystories.zse"));
        int matrices = 0;
        try (ZseFile file = ZseFile.open(zse)) {
            for (TensorInfo info : file.tensors()) {
                if (info.rank() == 2) {
                    assertKernelsAgree(file.tensor(info.name()));
                    matrices++;
                }
            }
        }
        assertEquals(15, matrices, "the embedding table and 7 matrices per layer of 2 layers");
    }

    /**
     * Decoded rows and products with 1 and 3 activation rows (the decode and prefill paths) of both families.
     *
     * @return the largest |product| seen, so a caller can tell the comparison was not of zeros
     */
    private static double assertKernelsAgree(ZseTensor tensor) {
        CpuWeight vector = VECTOR.weight(tensor);
        CpuWeight scalar = SCALAR.weight(tensor);
        int rows = vector.rows();
        int cols = vector.cols();
        float[][] decoded = new float[rows][cols];
        for (int r = 0; r < rows; r++) {
            float[] v = new float[cols];
            vector.decodeRow(r, v, 0);
            scalar.decodeRow(r, decoded[r], 0);
            float rowMax = 0;
            for (float w : decoded[r]) {
                rowMax = Math.max(rowMax, Math.abs(w));
            }
            for (int k = 0; k < cols; k++) {
                // Q4's vector decode is one fused multiply-add, the scalar one rounds q·d before adding m.
                assertEquals(decoded[r][k], v[k], 1e-6 * rowMax, tensor.name() + " w[" + r + ", " + k + "]");
            }
        }
        double largest = 0;
        SplittableRandom random = new SplittableRandom(rows * 31L + cols);
        for (int n : new int[]{1, 3}) {
            float[] x = new float[n * cols];
            for (int k = 0; k < x.length; k++) {
                x[k] = (float) random.nextDouble(-2, 2);
            }
            float[] fromVector = new float[n * rows];
            float[] fromScalar = new float[n * rows];
            vector.multiply(x, n, fromVector, THREADS);
            scalar.multiply(x, n, fromScalar, THREADS);
            for (int i = 0; i < n; i++) {
                for (int r = 0; r < rows; r++) {
                    double magnitude = 0;
                    for (int k = 0; k < cols; k++) {
                        magnitude += Math.abs((double) decoded[r][k] * x[i * cols + k]);
                    }
                    float want = fromVector[i * rows + r];
                    assertEquals(want, fromScalar[i * rows + r], 1e-5 * magnitude,
                            tensor.name() + " n=" + n + " out[" + i + ", " + r + "]");
                    largest = Math.max(largest, Math.abs(want));
                }
            }
        }
        return largest;
    }

    @ParameterizedTest
    @EnumSource(KvCacheType.class)
    void kvRowProductsAgreeOnEveryCacheType(KvCacheType type) {
        int positions = 5;
        int heads = 3;
        int headDim = 20; // not a multiple of the vector lanes: the vector kernels' tails are compared too
        KvRows rows = KvRows.create(type, positions, heads, headDim);
        SplittableRandom random = new SplittableRandom(type.ordinal());
        float[] row = new float[heads * headDim];
        for (int p = 0; p < positions; p++) {
            for (int k = 0; k < row.length; k++) {
                row[k] = (float) random.nextDouble(-3, 3);
            }
            rows.write(p, row, 0);
        }
        float[] q = new float[headDim + 3];
        for (int k = 0; k < q.length; k++) {
            q[k] = (float) random.nextDouble(-3, 3);
        }
        KvRowProducts vector = VECTOR.kvRowProducts();
        KvRowProducts scalar = SCALAR.kvRowProducts();
        float[] decoded = new float[heads * headDim];
        for (int p = 0; p < positions; p++) {
            rows.read(p, decoded, 0);
            for (int head = 0; head < heads; head++) {
                int offset = head * headDim;
                double magnitude = 0;
                for (int i = 0; i < headDim; i++) {
                    magnitude += Math.abs((double) decoded[offset + i] * q[3 + i]);
                }
                String where = type + " position " + p + " head " + head;
                float[] outVector;
                float[] outScalar;
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment query = TestActivations.of(q, arena);
                    float dot = vector.dot(rows, p, offset, query, 3, headDim);
                    assertTrue(Math.abs(dot) > 0, where);
                    assertEquals(dot, scalar.dot(rows, p, offset, query, 3, headDim), 1e-5 * magnitude, where + " q·k");

                    MemorySegment intoVector = TestActivations.of(q, arena);
                    MemorySegment intoScalar = TestActivations.of(q, arena);
                    vector.accumulate(rows, p, offset, 0.37f, intoVector, 3, headDim);
                    scalar.accumulate(rows, p, offset, 0.37f, intoScalar, 3, headDim);
                    outVector = TestActivations.toArray(intoVector);
                    outScalar = TestActivations.toArray(intoScalar);
                }
                for (int i = 0; i < headDim; i++) {
                    assertEquals(outVector[3 + i], outScalar[3 + i],
                            1e-6 * (Math.abs(q[3 + i]) + Math.abs(decoded[offset + i])), where + " p·v[" + i + "]");
                }
            }
        }
    }

    /** SwiGLU over values from deep in both tails of the exponential, and a length with a scalar tail. */
    @org.junit.jupiter.api.Test
    void swigluAgreesWithinAFewUlps() {
        SplittableRandom random = new SplittableRandom(3);
        int length = 1003;
        float[] gate = new float[length];
        float[] up = new float[length];
        for (int k = 0; k < length; k++) {
            gate[k] = (float) random.nextDouble(-30, 30);
            up[k] = (float) random.nextDouble(-4, 4);
        }
        float[] vector;
        float[] scalar;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ups = TestActivations.of(up, arena);
            MemorySegment intoVector = TestActivations.of(gate, arena);
            MemorySegment intoScalar = TestActivations.of(gate, arena);
            VectorKernels.INSTANCE.swiglu(intoVector, ups, length);
            ScalarKernels.INSTANCE.swiglu(intoScalar, ups, length);
            vector = TestActivations.toArray(intoVector);
            scalar = TestActivations.toArray(intoScalar);
        }
        for (int k = 0; k < length; k++) {
            assertEquals(scalar[k], vector[k], 4 * Math.ulp(scalar[k]) + 1e-30f, "silu(" + gate[k] + ") * " + up[k]);
        }
    }
}
