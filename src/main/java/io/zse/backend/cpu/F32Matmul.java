package io.zse.backend.cpu;

import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/** F32 weights: 4 bytes per element. Also home of the F32 dot products the other kernels finish with. */
public final class F32Matmul extends Matmul {
    F32Matmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        long base = (long) row * cols * 4;
        FloatVector acc = FloatVector.zero(FLOATS);
        int k = 0;
        for (int upper = FLOATS.loopBound(cols); k < upper; k += FLOATS.length()) {
            FloatVector w = FloatVector.fromMemorySegment(FLOATS, data, base + 4L * k, ByteOrder.LITTLE_ENDIAN);
            acc = w.fma(floatsAt(x, xOffset + k), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; k < cols; k++) {
            sum += data.get(LittleEndian.FLOAT, base + 4L * k) * x.getAtIndex(FLOAT, xOffset + k);
        }
        return sum;
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        MemorySegment.copy(data, LittleEndian.FLOAT, (long) row * cols * 4, out, FLOAT, offset * Float.BYTES, cols);
    }

    /** Σ a[aOffset + k] · b[bOffset + k] for k < length, over F32 activations (offsets in floats). */
    static float dot(MemorySegment a, long aOffset, MemorySegment b, long bOffset, int length) {
        FloatVector acc = FloatVector.zero(FLOATS);
        int k = 0;
        for (int upper = FLOATS.loopBound(length); k < upper; k += FLOATS.length()) {
            acc = floatsAt(a, aOffset + k).fma(floatsAt(b, bOffset + k), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; k < length; k++) {
            sum += a.getAtIndex(FLOAT, aOffset + k) * b.getAtIndex(FLOAT, bOffset + k);
        }
        return sum;
    }
}
