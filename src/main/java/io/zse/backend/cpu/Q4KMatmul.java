package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

/**
 * Q4_K weights: per super-block of 256, 128 bytes of nibbles (byte 32c + l: element 64c + l low, 64c + 32 + l high)
 * and d, dmin with eight 6-bit (scale, min) pairs; w = d·scale·q - dmin·min per sub-block of 32.
 */
public final class Q4KMatmul extends KQuantMatmul.WithMins {
    Q4KMatmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    void chunkProducts(long s, int c, MemorySegment x, long xAt, FloatVector[] sums) {
        long codes = s * 128 + 32L * c;
        FloatVector low = FloatVector.zero(FLOATS);
        FloatVector high = FloatVector.zero(FLOATS);
        for (int j = 0; j < 32; j += FLOATS.length()) {
            IntVector p = bytes(codes + j);
            low = floats(p.and(0x0F)).fma(floatsAt(x, xAt + j), low);
            high = floats(p.lanewise(VectorOperators.LSHR, 4)).fma(floatsAt(x, xAt + 32 + j), high);
        }
        sums[0] = low;
        sums[1] = high;
    }
}
