package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.Nf4;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

import java.lang.foreign.MemorySegment;


/**
 * NF4 weights: Q4's nibble packing, codes looked up in the 16-entry NormalFloat table, one F16 absmax per group of
 * 64; w = NF4[q] * absmax. The table lookup is a lane shuffle of the table held in registers.
 */
public final class Nf4Matmul extends NibbleMatmul {
    /** The code book's F32 bit patterns in vectors of INTS.length() entries (one when a vector holds 16). */
    private static final IntVector[] TABLE = codebookVectors();

    /** The only group size NF4 has; a constant lets the JIT unroll the group loop. */
    private static final int GROUP = 64;

    Nf4Matmul(ZseTensor tensor) {
        super(tensor);
        requireGroupSize(GROUP);
    }

    private static IntVector[] codebookVectors() {
        int lanes = INTS.length();
        int[] book = new int[Math.max(16, lanes)];
        for (int q = 0; q < 16; q++) {
            book[q] = Float.floatToRawIntBits(Nf4.value(q));
        }
        IntVector[] parts = new IntVector[(16 + lanes - 1) / lanes];
        for (int t = 0; t < parts.length; t++) {
            parts[t] = IntVector.fromArray(INTS, book, t * lanes);
        }
        return parts;
    }

    /** NF4[code] for each lane of {@code q} (int lanes holding 0..15). */
    private static FloatVector lookup(IntVector q) {
        VectorShuffle<Integer> withinPart = q.and(INTS.length() - 1).toShuffle();
        IntVector bits = TABLE[0].rearrange(withinPart);
        for (int t = 1; t < TABLE.length; t++) {
            VectorMask<Integer> inPart = q.lanewise(VectorOperators.LSHR, Integer.numberOfTrailingZeros(INTS.length())).eq(t);
            bits = bits.blend(TABLE[t].rearrange(withinPart), inPart);
        }
        return bits.reinterpretAsFloats();
    }

    private float absmax(long group) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, group * 2));
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        int half = GROUP / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / GROUP;
        FloatVector acc = FloatVector.zero(FLOATS);
        for (int k = 0, g = 0; k < cols; k += GROUP, g++) {
            FloatVector groupSum = FloatVector.zero(FLOATS);
            for (int j = 0; j < half; j += FLOATS.length()) {
                IntVector p = packed(base + k / 2 + j);
                groupSum = lookup(lowCodes(p)).fma(floatsAt(x, xOffset + k + j), groupSum);
                groupSum = lookup(highCodes(p))
                        .fma(floatsAt(x, xOffset + k + half + j), groupSum);
            }
            acc = groupSum.fma(FloatVector.broadcast(FLOATS, absmax(firstGroup + g)), acc);
        }
        return acc.reduceLanes(VectorOperators.ADD);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        int half = GROUP / 2;
        long base = (long) row * cols / 2;
        long firstGroup = (long) row * cols / GROUP;
        for (int k = 0, g = 0; k < cols; k += GROUP, g++) {
            float a = absmax(firstGroup + g);
            for (int j = 0; j < half; j += FLOATS.length()) {
                IntVector p = packed(base + k / 2 + j);
                lookup(lowCodes(p)).mul(a).intoMemorySegment(out, (offset + k + j) * 4L, HostActivations.ORDER);
                lookup(highCodes(p)).mul(a).intoMemorySegment(out, (offset + k + half + j) * 4L, HostActivations.ORDER);
            }
        }
    }
}
