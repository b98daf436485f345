package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
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

    static FloatVector low(ByteVector packed) {
        return (FloatVector) lowCodes(packed).convertShape(VectorOperators.B2F, FLOATS, 0);
    }

    static FloatVector high(ByteVector packed) {
        return (FloatVector) highCodes(packed).convertShape(VectorOperators.B2F, FLOATS, 0);
    }

    /** The i-th F16 of the scales: d of group i/2 when i is even, m when odd. */
    private float scale(long i) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, i * 2));
    }

    @Override
    public float dot(int row, float[] x, int xOffset) {
        int half = groupSize / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int k = 0, g = 0; k < cols; k += groupSize, g++) {
            FloatVector qx = FloatVector.zero(FLOATS);
            FloatVector sx = FloatVector.zero(FLOATS);
            long groupBase = base + k / 2;
            for (int j = 0; j < half; j += FLOATS.length()) {
                ByteVector p = packed(groupBase + j);
                FloatVector xLow = FloatVector.fromArray(FLOATS, x, xOffset + k + j);
                FloatVector xHigh = FloatVector.fromArray(FLOATS, x, xOffset + k + half + j);
                qx = low(p).fma(xLow, qx);
                qx = high(p).fma(xHigh, qx);
                sx = sx.add(xLow).add(xHigh);
            }
            acc = qx.fma(FloatVector.broadcast(FLOATS, scale(2 * (firstGroup + g))), acc);
            acc = sx.fma(FloatVector.broadcast(FLOATS, scale(2 * (firstGroup + g) + 1)), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void decodeRow(int row, float[] out, int offset) {
        int half = groupSize / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / groupSize;
        for (int k = 0, g = 0; k < cols; k += groupSize, g++) {
            float d = scale(2 * (firstGroup + g));
            float m = scale(2 * (firstGroup + g) + 1);
            for (int j = 0; j < half; j += FLOATS.length()) {
                ByteVector p = packed(base + k / 2 + j);
                low(p).fma(d, m).intoArray(out, offset + k + j);
                high(p).fma(d, m).intoArray(out, offset + k + half + j);
            }
        }
    }
}
