package io.zse.backend.cpu;

import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/** The 16-bit float types (F16, BF16): 2 bytes per element; subclasses say how the bits widen to F32. */
public abstract sealed class TwoByteMatmul extends Matmul permits F16Matmul, Bf16Matmul {
    TwoByteMatmul(ZseTensor tensor) {
        super(tensor);
    }

    /** F32 values of FLOATS.length() elements whose 16-bit patterns are sign-extended in {@code bits}. */
    abstract FloatVector widen(IntVector bits);

    /** F32 value of one 16-bit pattern. */
    abstract float widen(short bits);

    private FloatVector load(long byteOffset) {
        return widen((IntVector) ShortVector.fromMemorySegment(SHORTS, data, byteOffset, ByteOrder.LITTLE_ENDIAN)
                .convertShape(VectorOperators.S2I, INTS, 0));
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        long base = (long) row * cols * 2;
        FloatVector acc = FloatVector.zero(FLOATS);
        int k = 0;
        for (int upper = FLOATS.loopBound(cols); k < upper; k += FLOATS.length()) {
            acc = load(base + 2L * k).fma(floatsAt(x, xOffset + k), acc);
        }
        float sum = acc.reduceLanes(VectorOperators.ADD);
        for (; k < cols; k++) {
            sum += widen(data.get(LittleEndian.SHORT, base + 2L * k)) * x.getAtIndex(FLOAT, xOffset + k);
        }
        return sum;
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        long base = (long) row * cols * 2;
        int k = 0;
        for (int upper = FLOATS.loopBound(cols); k < upper; k += FLOATS.length()) {
            load(base + 2L * k).intoMemorySegment(out, (offset + k) * 4L, HostActivations.ORDER);
        }
        for (; k < cols; k++) {
            out.setAtIndex(FLOAT, offset + k, widen(data.get(LittleEndian.SHORT, base + 2L * k)));
        }
    }
}
