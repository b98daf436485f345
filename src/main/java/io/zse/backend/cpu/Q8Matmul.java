package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

import java.lang.foreign.MemorySegment;

/** Q8 weights: int8 codes, one F16 scale d per group of 32; w = q * d. */
public final class Q8Matmul extends Matmul {
    /** The only group size Q8 has; as a constant the JIT unrolls the group loop (read from the field, 2.5x slower). */
    private static final int GROUP = 32;

    Q8Matmul(ZseTensor tensor) {
        super(tensor);
        requireGroupSize(GROUP);
    }

    private FloatVector codes(long byteOffset) {
        return (FloatVector) ByteVector.fromMemorySegment(BYTES, data, byteOffset, ByteOrder.LITTLE_ENDIAN)
                .convertShape(VectorOperators.B2F, FLOATS, 0);
    }

    private float scale(long group) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, group * 2));
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        long base = (long) row * cols;
        long firstGroup = base / GROUP;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int k = 0, g = 0; k < cols; k += GROUP, g++) {
            // Σ q·x over the group, then one multiply by its scale.
            FloatVector groupSum = FloatVector.zero(FLOATS);
            for (int j = 0; j < GROUP; j += FLOATS.length()) {
                groupSum = codes(base + k + j).fma(floatsAt(x, xOffset + k + j), groupSum);
            }
            acc = groupSum.fma(FloatVector.broadcast(FLOATS, scale(firstGroup + g)), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        long base = (long) row * cols;
        long firstGroup = base / GROUP;
        for (int k = 0, g = 0; k < cols; k += GROUP, g++) {
            float d = scale(firstGroup + g);
            for (int j = 0; j < GROUP; j += FLOATS.length()) {
                codes(base + k + j).mul(d).intoMemorySegment(out, (offset + k + j) * 4L, HostActivations.ORDER);
            }
        }
    }
}
