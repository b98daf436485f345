package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Q8: one int8 code q in [-127, 127] per element and one F16 scale d per group of 32; w = q * d. */
public final class Q8Quantizer extends NativeFirstQuantizer {
    private static final int GROUP_SIZE = 32;
    private static final int MAX_CODE = 127;

    /**
     * Scales d = absmax / (127 + t) for t in [-0.5, 0.5]: the plain scale first, then the ones whose rounding error
     * can still stay within half a plain step (smaller d clamps the largest element, larger d widens every step).
     */
    private static final float[] SCALE_FACTORS = {
        1f / 127, 1 / 126.5f, 1 / 126.6f, 1 / 126.7f, 1 / 126.8f, 1 / 126.9f,
        1 / 127.1f, 1 / 127.2f, 1 / 127.3f, 1 / 127.4f, 1 / 127.5f};

    private static final SymmetricScaleSearch SEARCH = new SymmetricScaleSearch(TensorType.Q8,
            new SymmetricScaleSearch.Codes() {
                @Override
                public int nearest(float scaledValue) {
                    return Math.clamp(Math.round(scaledValue), -MAX_CODE, MAX_CODE);
                }

                @Override
                public float value(int code) {
                    return code;
                }
            }, SCALE_FACTORS);

    Q8Quantizer() {
        super(TensorType.Q8, GROUP_SIZE, SCALE_FACTORS, null, 0);
    }

    @Override
    public void quantizeInJava(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        GroupInput.check(src, srcOffset, count, GROUP_SIZE);
        byte[] codes = new byte[GROUP_SIZE];
        for (int group = 0; group < count / GROUP_SIZE; group++) {
            float d = SEARCH.chooseScale(src, srcOffset + group * GROUP_SIZE, GROUP_SIZE, codes, group);
            MemorySegment.copy(codes, 0, data, ValueLayout.JAVA_BYTE,
                    dataOffset + (long) group * GROUP_SIZE, GROUP_SIZE);
            scales.set(LittleEndian.SHORT, scalesOffset + 2L * group, HalfFloats.toF16(d));
        }
    }
}
