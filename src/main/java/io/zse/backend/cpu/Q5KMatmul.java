package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

/**
 * Q5_K weights: Q4_K's nibbles and scales, and per super-block 32 bytes of fifth bits (bit 2c of byte l for element
 * 64c + l, bit 2c + 1 for element 64c + 32 + l); w = d·scale·q - dmin·min, q in 0..31.
 */
public final class Q5KMatmul extends KQuantMatmul.WithMins {
    Q5KMatmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    void chunkProducts(long s, int c, MemorySegment x, long xAt, FloatVector[] sums) {
        long codes = s * 160 + 32L * c;
        long fifth = s * 160 + 128;
        FloatVector low = FloatVector.zero(FLOATS);
        FloatVector high = FloatVector.zero(FLOATS);
        for (int j = 0; j < 32; j += FLOATS.length()) {
            IntVector p = bytes(codes + j);
            IntVector h = bytes(fifth + j).lanewise(VectorOperators.LSHR, 2 * c);
            IntVector lowCodes = p.and(0x0F).or(h.and(1).lanewise(VectorOperators.LSHL, 4));
            IntVector highCodes = p.lanewise(VectorOperators.LSHR, 4).or(h.and(2).lanewise(VectorOperators.LSHL, 3));
            low = floats(lowCodes).fma(floatsAt(x, xAt + j), low);
            high = floats(highCodes).fma(floatsAt(x, xAt + 32 + j), high);
        }
        sums[0] = low;
        sums[1] = high;
    }
}
