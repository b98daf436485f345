package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.Nf4;
import io.zse.format.Nibbles;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;

/** NF4: one 4-bit {@link Nf4} code per element (nibble-packed) and one F16 absmax per group of 64. */
public final class Nf4Quantizer extends NativeFirstQuantizer {
    private static final int GROUP_SIZE = 64;

    /**
     * Stored absmax as a fraction of the true one: 1.0 (plain) down to 0.85. Below 1 - {@link Nf4#MAX_HALF_GAP}
     * (about 0.848) clipping the largest element would cost more than the bound plain rounding guarantees.
     */
    private static final float[] SCALE_FACTORS = {
        1.0f, 0.9875f, 0.975f, 0.9625f, 0.95f, 0.9375f, 0.925f, 0.9125f, 0.9f, 0.8875f, 0.875f, 0.8625f, 0.85f};

    private static final float[] CODEBOOK = Nf4.valuesThenMidpoints();

    private static final SymmetricScaleSearch SEARCH = new SymmetricScaleSearch(TensorType.NF4,
            new SymmetricScaleSearch.Codes() {
                @Override
                public int nearest(float scaledValue) {
                    return Nf4.nearestCode(scaledValue);
                }

                @Override
                public float value(int code) {
                    return Nf4.value(code);
                }
            }, SCALE_FACTORS);

    Nf4Quantizer() {
        super(TensorType.NF4, GROUP_SIZE, SCALE_FACTORS, CODEBOOK, Nf4.MAX_HALF_GAP);
    }

    @Override
    public void quantizeInJava(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        GroupInput.check(src, srcOffset, count, GROUP_SIZE);
        byte[] codes = new byte[GROUP_SIZE];
        for (int group = 0; group < count / GROUP_SIZE; group++) {
            float absmax = SEARCH.chooseScale(src, srcOffset + group * GROUP_SIZE, GROUP_SIZE, codes, group);
            Nibbles.packGroup(codes, GROUP_SIZE, data, dataOffset + (long) group * GROUP_SIZE / 2);
            scales.set(LittleEndian.SHORT, scalesOffset + 2L * group, HalfFloats.toF16(absmax));
        }
    }
}
