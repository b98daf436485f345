package io.zse.backend.cpu;

import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/** F32 weights: 4 bytes per element. Also home of the F32 dot products the other kernels finish with. */
public final class F32Matmul extends Matmul {
    F32Matmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    public float dot(int row, float[] x, int xOffset) {
        long base = (long) row * cols * 4;
        FloatVector acc = FloatVector.zero(FLOATS);
        int k = 0;
        for (int upper = FLOATS.loopBound(cols); k < upper; k += FLOATS.length()) {
            FloatVector w = FloatVector.fromMemorySegment(FLOATS, data, base + 4L * k, ByteOrder.LITTLE_ENDIAN);
            acc = w.fma(FloatVector.fromArray(FLOATS, x, xOffset + k), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; k < cols; k++) {
            sum += data.get(LittleEndian.FLOAT, base + 4L * k) * x[xOffset + k];
        }
        return sum;
    }

    @Override
    public void decodeRow(int row, float[] out, int offset) {
        MemorySegment.copy(data, LittleEndian.FLOAT, (long) row * cols * 4, out, offset, cols);
    }

    /** Σ a[aOffset + k] · b[bOffset + k] for k < length. */
    static float dot(float[] a, int aOffset, float[] b, int bOffset, int length) {
        FloatVector acc = FloatVector.zero(FLOATS);
        int k = 0;
        for (int upper = FLOATS.loopBound(length); k < upper; k += FLOATS.length()) {
            acc = FloatVector.fromArray(FLOATS, a, aOffset + k).fma(FloatVector.fromArray(FLOATS, b, bOffset + k), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; k < length; k++) {
            sum += a[aOffset + k] * b[bOffset + k];
        }
        return sum;
    }

    /** Σ w[k] · x[xOffset + k] over one decoded group, as a vector to be scaled by the caller. */
    static FloatVector groupDot(float[] w, float[] x, int xOffset, int length) {
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int k = 0; k < length; k += FLOATS.length()) {
            acc = FloatVector.fromArray(FLOATS, w, k).fma(FloatVector.fromArray(FLOATS, x, xOffset + k), acc);
        }
        return acc;
    }
}
