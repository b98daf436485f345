package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Each storage type's kernel, vector and scalar, against the scalar reference decoder, dotted in double. */
class MatmulTest {
    private static final String[] CASES = {
            "F32, 0, 37, 45, 1", "F32, 0, 37, 45, 5", "F32, 0, 3, 7, 2",
            "F16, 0, 37, 45, 1", "F16, 0, 37, 45, 5",
            "BF16, 0, 37, 45, 1", "BF16, 0, 37, 45, 5",
            "Q8, 32, 37, 96, 1", "Q8, 32, 37, 96, 5",
            "Q4, 32, 37, 96, 1", "Q4, 32, 37, 96, 5", "Q4, 64, 19, 192, 3", "Q4, 128, 21, 256, 1", "Q4, 128, 21, 256, 4",
            "NF4, 64, 37, 192, 1", "NF4, 64, 37, 192, 5", "Q5, 32, 37, 96, 1", "Q5, 32, 19, 160, 5",
            "Q4_K, 256, 37, 512, 1", "Q4_K, 256, 37, 512, 5", "Q5_K, 256, 19, 768, 1", "Q5_K, 256, 21, 256, 3",
            "Q6_K, 256, 37, 512, 1", "Q6_K, 256, 21, 256, 5",
    };

    private static final CpuThreads THREADS = new CpuThreads(2);

    @AfterAll
    static void close() {
        THREADS.close();
    }

    /** Random bytes for the codes; F16 scales (or F16/BF16/F32 elements) drawn from a sane range. */
    static ZseTensor randomTensor(TensorType type, int groupSize, int rows, int cols, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long count = (long) rows * cols;
        MemorySegment data = Arena.ofAuto().allocate(type.dataBytes(count));
        for (long i = 0; i < count; i++) {
            float value = (float) random.nextDouble(-1, 1);
            switch (type) {
                case F32 -> data.set(LittleEndian.FLOAT, 4 * i, value);
                case F16 -> data.set(LittleEndian.SHORT, 2 * i, HalfFloats.toF16(value));
                case BF16 -> data.set(LittleEndian.SHORT, 2 * i, HalfFloats.toBf16(value));
                default -> {
                }
            }
        }
        if (type.isQuantized()) {
            for (long b = 0; b < data.byteSize(); b++) {
                data.set(ValueLayout.JAVA_BYTE, b, (byte) (type == TensorType.Q8 ? random.nextInt(-127, 128) : random.nextInt(256)));
            }
        }
        MemorySegment scales = Arena.ofAuto().allocate(Math.max(1, type.scaleBytes(count, groupSize)));
        if (type.isKQuant()) {
            // Random sub-block scales (and mins); each super-block's F16 d (and dmin) from a sane range.
            long perBlock = type.scaleBytes(256, 256);
            for (long b = 0; b < scales.byteSize(); b++) {
                scales.set(ValueLayout.JAVA_BYTE, b, (byte) random.nextInt(256));
            }
            for (long at = 0; at < scales.byteSize(); at += perBlock) {
                scales.set(LittleEndian.SHORT, at, HalfFloats.toF16((float) random.nextDouble(-0.004, 0.004)));
                if (type != TensorType.Q6_K) {
                    scales.set(LittleEndian.SHORT, at + 2, HalfFloats.toF16((float) random.nextDouble(0, 0.004)));
                }
            }
        } else {
            for (long s = 0; s < type.scaleBytes(count, groupSize) / 2; s++) {
                scales.set(LittleEndian.SHORT, 2 * s, HalfFloats.toF16((float) random.nextDouble(-0.05, 0.05)));
            }
        }
        TensorInfo info = TensorInfo.planned("w", type, new long[]{rows, cols}, groupSize);
        return new ZseTensor(info, data, scales);
    }

    /** Every case with each kernel family. */
    static Stream<Arguments> cases() {
        return Stream.of("vector", "scalar").flatMap(kernels -> Arrays.stream(CASES).map(c -> {
            String[] f = c.split(", ");
            return Arguments.of(kernels, TensorType.valueOf(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]),
                    Integer.parseInt(f[3]), Integer.parseInt(f[4]));
        }));
    }

    @ParameterizedTest(name = "{0} {1} g={2} [{3} x {4}] n={5}")
    @MethodSource("cases")
    void matchesScalarReference(String kernels, TensorType type, int groupSize, int rows, int cols, int n) {
        ZseTensor tensor = randomTensor(type, groupSize, rows, cols, 42L * rows + cols + n);
        SplittableRandom random = new SplittableRandom(n);
        float[] x = new float[n * cols];
        for (int k = 0; k < x.length; k++) {
            x[k] = (float) random.nextDouble(-2, 2);
        }
        float[] out = new float[n * rows];
        CpuWeight matmul = TestKernels.named(kernels).weight(tensor);
        matmul.multiply(x, n, out, THREADS);

        float[] row = new float[cols];
        float[] decoded = new float[cols];
        for (int r = 0; r < rows; r++) {
            TensorDecoder.decode(type, groupSize, tensor.data(), tensor.scales(), (long) r * cols, cols, row, 0);
            matmul.decodeRow(r, decoded, 0);
            for (int k = 0; k < cols; k++) {
                assertEquals(row[k], decoded[k], 1e-6 * Math.max(1, Math.abs(row[k])), "decoded w[" + r + ", " + k + "]");
            }
            for (int i = 0; i < n; i++) {
                double expected = 0;
                double magnitude = 0;
                for (int k = 0; k < cols; k++) {
                    expected += (double) row[k] * x[i * cols + k];
                    magnitude += Math.abs((double) row[k] * x[i * cols + k]);
                }
                assertEquals(expected, out[i * rows + r], 1e-5 * Math.max(1e-3, magnitude), "out[" + i + ", " + r + "]");
            }
        }
    }

    @Test
    void f16WidensSubnormalsAndInfinitiesExactly() {
        short[] patterns = {0x0000, (short) 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, (short) 0xc000, 0x7bff, 0x7c00,
                (short) 0xfc00, 0x1234, (short) 0x8001, 0x5555, 0x2aaa, 0x7000, 0x0200};
        TensorInfo info = TensorInfo.planned("w", TensorType.F16, new long[]{1, patterns.length}, 0);
        MemorySegment data = Arena.ofAuto().allocate(2L * patterns.length);
        for (int i = 0; i < patterns.length; i++) {
            data.set(LittleEndian.SHORT, 2L * i, patterns[i]);
        }
        float[] decoded = new float[patterns.length];
        Matmul.of(new ZseTensor(info, data, MemorySegment.NULL)).decodeRow(0, decoded, 0);
        for (int i = 0; i < patterns.length; i++) {
            assertEquals(Float.float16ToFloat(patterns[i]), decoded[i], "pattern " + Integer.toHexString(patterns[i] & 0xffff));
        }
    }
}
