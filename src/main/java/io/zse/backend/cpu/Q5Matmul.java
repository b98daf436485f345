package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.Q5Groups;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * Q5 weights (ggml's Q5_0/Q5_1 codes): per group of 32, 16 bytes of nibbles (byte j: element j low, j + 16 high), a
 * u32 of fifth bits (bit j: element j), and F16 (d, m); w = q * d + m. A group's dot is d·Σ q·x + m·Σ x.
 */
public final class Q5Matmul extends NibbleMatmul {
    Q5Matmul(ZseTensor tensor) {
        super(tensor);
    }

    /** Fifth bits of lanes {@code first ..}: bit (first + lane) of qh, moved to bit 4. */
    private static IntVector fifth(int qh, int first) {
        return IntVector.broadcast(INTS, qh).lanewise(VectorOperators.LSHR, LANE_INDEX.add(first))
                .and(1).lanewise(VectorOperators.LSHL, 4);
    }

    private static final IntVector LANE_INDEX = IntVector.fromArray(INTS, lanes(), 0);

    private static int[] lanes() {
        int[] lanes = new int[INTS.length()];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = i;
        }
        return lanes;
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        long firstGroup = (long) row * cols / 32;
        FloatVector acc = FloatVector.zero(FLOATS);
        float mSum = 0;
        for (int g = 0, groups = cols / 32; g < groups; g++) {
            long at = (firstGroup + g) * Q5Groups.GROUP_BYTES;
            int qh = data.get(LittleEndian.INT, at + 16);
            long xAt = xOffset + 32L * g;
            FloatVector qx = FloatVector.zero(FLOATS);
            FloatVector sx = FloatVector.zero(FLOATS);
            for (int j = 0; j < 16; j += FLOATS.length()) {
                IntVector p = packed(at + j);
                FloatVector xl = floatsAt(x, xAt + j);
                FloatVector xh = floatsAt(x, xAt + 16 + j);
                qx = floats(lowCodes(p).or(fifth(qh, j))).fma(xl, qx);
                qx = floats(highCodes(p).or(fifth(qh, 16 + j))).fma(xh, qx);
                sx = sx.add(xl).add(xh);
            }
            int dm = scales.get(LittleEndian.INT, (firstGroup + g) * 4);
            acc = qx.fma(FloatVector.broadcast(FLOATS, HalfFloats.fromF16((short) dm)), acc);
            mSum += HalfFloats.fromF16((short) (dm >>> 16)) * sx.reduceLanes(VectorOperators.ADD);
        }
        return acc.reduceLanes(VectorOperators.ADD) + mSum;
    }

    private static FloatVector floats(IntVector codes) {
        return (FloatVector) codes.convert(VectorOperators.I2F, 0);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        long firstGroup = (long) row * cols / 32;
        for (int g = 0, groups = cols / 32; g < groups; g++) {
            int dm = scales.get(LittleEndian.INT, (firstGroup + g) * 4);
            float d = HalfFloats.fromF16((short) dm);
            float m = HalfFloats.fromF16((short) (dm >>> 16));
            for (int j = 0; j < 32; j++) {
                out.setAtIndex(FLOAT, offset + 32L * g + j, Q5Groups.code(data, firstGroup + g, j) * d + m);
            }
        }
    }
}
