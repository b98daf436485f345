package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

/**
 * Q6_K weights: per super-block of 256, ql[128] and qh[64] (ggml's order: in half h, byte l of ql and qh carry
 * elements 128h + l, + 32, + 64, + 96) and d with 16 int8 scales, one per 16 elements; w = d·scale·(q - 32).
 */
public final class Q6KMatmul extends KQuantMatmul {
    Q6KMatmul(ZseTensor tensor) {
        super(tensor);
    }

    private int scale(long at) {
        return scales.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at);
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        long first = (long) row * superBlocks;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int sb = 0; sb < superBlocks; sb++) {
            long s = first + sb;
            long sc = s * 18;
            float d = half(sc);
            for (int h = 0; h < 2; h++) {
                long ql = s * 192 + 64L * h;
                long qh = s * 192 + 128 + 32L * h;
                long xAt = xOffset + (long) sb * SUPER + 128 * h;
                // A vector of at most 16 lanes lies within one group of 16 elements, so one scale per product.
                for (int j = 0; j < 32; j += FLOATS.length()) {
                    IntVector l1 = bytes(ql + j);
                    IntVector l2 = bytes(ql + 32 + j);
                    IntVector hi = bytes(qh + j);
                    long is = sc + 2 + 8L * h + j / 16;
                    acc = term(l1.and(0x0F), hi, 0, x, xAt + j, d * scale(is), acc);
                    acc = term(l2.and(0x0F), hi, 2, x, xAt + 32 + j, d * scale(is + 2), acc);
                    acc = term(l1.lanewise(VectorOperators.LSHR, 4), hi, 4, x, xAt + 64 + j, d * scale(is + 4), acc);
                    acc = term(l2.lanewise(VectorOperators.LSHR, 4), hi, 6, x, xAt + 96 + j, d * scale(is + 6), acc);
                }
            }
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    /** acc + factor·Σ(q - 32)·x, q = the low 4 bits with bits {@code shift}, +1 of the high byte above them. */
    private static FloatVector term(IntVector low4, IntVector high, int shift, MemorySegment x, long xAt, float factor,
                                    FloatVector acc) {
        IntVector q = low4.or(high.lanewise(VectorOperators.LSHR, shift).and(3).lanewise(VectorOperators.LSHL, 4)).sub(32);
        return floats(q).mul(floatsAt(x, xAt)).fma(FloatVector.broadcast(FLOATS, factor), acc);
    }
}
