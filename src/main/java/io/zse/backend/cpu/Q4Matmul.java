package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;


/**
 * Q4 weights: per group of g elements, g/2 bytes (byte j: element j in the low nibble, element j + g/2 in the high
 * nibble) and F16 (d, m); w = q * d + m. A group's dot is d·Σ q·x + m·Σ x.
 */
public final class Q4Matmul extends NibbleMatmul {
    Q4Matmul(ZseTensor tensor) {
        super(tensor);
    }

    static FloatVector low(IntVector packed) {
        return (FloatVector) lowCodes(packed).convert(VectorOperators.I2F, 0);
    }

    static FloatVector high(IntVector packed) {
        return (FloatVector) highCodes(packed).convert(VectorOperators.I2F, 0);
    }

    /** Group g's F16 pair: d in the low 16 bits, m in the high; one read instead of two bounds-checked ones. */
    private int scalePair(long group) {
        return scales.get(LittleEndian.INT, group * 4);
    }

    private static float d(int scalePair) {
        return HalfFloats.fromF16((short) scalePair);
    }

    private static float m(int scalePair) {
        return HalfFloats.fromF16((short) (scalePair >>> 16));
    }

    // Each group size goes through its own call with a literal, so the JIT compiles a copy whose group loop it can
    // unroll; a group size read from the field leaves a short loop of unknown count that runs 2.5x slower.
    @Override
    public float dot(int row, float[] x, int xOffset) {
        return dot(row, x, xOffset, groupSums(x, xOffset));
    }

    /** The m·Σx half of every row's dot shares Σx per group: summed once per vector, not once per row. */
    @Override
    protected void multiplyVector(float[] x, float[] out, CpuThreads threads) {
        float[] sums = groupSums(x, 0);
        threads.parallelFor(rows, cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out[r] = dot(r, x, 0, sums);
            }
        });
    }

    private float dot(int row, float[] x, int xOffset, float[] groupSums) {
        return switch (groupSize) {
            case 32 -> dot(row, x, xOffset, groupSums, 32);
            case 64 -> dot(row, x, xOffset, groupSums, 64);
            default -> dot(row, x, xOffset, groupSums, 128);
        };
    }

    /** Σ x over each group of x[xOffset .. xOffset + cols). */
    private float[] groupSums(float[] x, int xOffset) {
        float[] sums = new float[cols / groupSize];
        for (int g = 0; g < sums.length; g++) {
            FloatVector s = FloatVector.zero(FLOATS);
            for (int k = g * groupSize; k < (g + 1) * groupSize; k += FLOATS.length()) {
                s = s.add(FloatVector.fromArray(FLOATS, x, xOffset + k));
            }
            sums[g] = s.reduceLanes(VectorOperators.ADD);
        }
        return sums;
    }

    @Override
    public void decodeRow(int row, float[] out, int offset) {
        switch (groupSize) {
            case 32 -> decodeRow(row, out, offset, 32);
            case 64 -> decodeRow(row, out, offset, 64);
            default -> decodeRow(row, out, offset, 128);
        }
    }

    private float dot(int row, float[] x, int xOffset, float[] groupSums, int groupSize) {
        int half = groupSize / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        float mSum = 0;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int k = 0, g = 0; k < cols; k += groupSize, g++) {
            FloatVector qx = FloatVector.zero(FLOATS);
            long groupBase = base + k / 2;
            for (int j = 0; j < half; j += FLOATS.length()) {
                IntVector p = packed(groupBase + j);
                qx = low(p).fma(FloatVector.fromArray(FLOATS, x, xOffset + k + j), qx);
                qx = high(p).fma(FloatVector.fromArray(FLOATS, x, xOffset + k + half + j), qx);
            }
            int dm = scalePair(firstGroup + g);
            acc = qx.fma(FloatVector.broadcast(FLOATS, d(dm)), acc);
            mSum += m(dm) * groupSums[g];
        }
        return acc.reduceLanes(VectorOperators.ADD) + mSum;
    }

    private void decodeRow(int row, float[] out, int offset, int groupSize) {
        int half = groupSize / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        for (int k = 0, g = 0; k < cols; k += groupSize, g++) {
            int dm = scalePair(firstGroup + g);
            float d = d(dm);
            float m = m(dm);
            for (int j = 0; j < half; j += FLOATS.length()) {
                IntVector p = packed(base + k / 2 + j);
                low(p).fma(d, m).intoArray(out, offset + k + j);
                high(p).fma(d, m).intoArray(out, offset + k + half + j);
            }
        }
    }
}
