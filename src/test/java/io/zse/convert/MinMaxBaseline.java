package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.Nf4;
import io.zse.format.Nibbles;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Test-only baseline: plain rounding with min/max scales, no search (Q8 d = absmax / 127, Q4 d = (max - min) / 15 and
 * m = min, NF4 absmax). Scales are rounded to F16 before the codes are chosen, as in the real quantizers, so the
 * comparison measures the search alone.
 */
final class MinMaxBaseline implements RoundTrip.Encoder {
    private final TensorType type;
    private final int groupSize;

    MinMaxBaseline(TensorType type, int groupSize) {
        this.type = type;
        this.groupSize = groupSize;
    }

    @Override
    public void quantize(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        byte[] codes = new byte[groupSize];
        for (int group = 0; group < count / groupSize; group++) {
            int offset = srcOffset + group * groupSize;
            float min = Float.POSITIVE_INFINITY;
            float max = Float.NEGATIVE_INFINITY;
            for (int i = offset; i < offset + groupSize; i++) {
                min = Math.min(min, src[i]);
                max = Math.max(max, src[i]);
            }
            float absmax = Math.max(-min, max);
            switch (type) {
                case Q8 -> {
                    float d = HalfFloats.roundToF16(absmax / 127);
                    for (int i = 0; i < groupSize; i++) {
                        codes[i] = (byte) (d == 0 ? 0 : Math.clamp(Math.round(src[offset + i] / d), -127, 127));
                    }
                    MemorySegment.copy(codes, 0, data, ValueLayout.JAVA_BYTE, dataOffset + (long) group * groupSize,
                            groupSize);
                    scales.set(LittleEndian.SHORT, scalesOffset + 2L * group, HalfFloats.toF16(d));
                }
                case Q4 -> {
                    float d = HalfFloats.roundToF16((max - min) / 15);
                    float m = HalfFloats.roundToF16(min);
                    for (int i = 0; i < groupSize; i++) {
                        codes[i] = (byte) (d == 0 ? 0 : Math.clamp(Math.round((src[offset + i] - m) / d), 0, 15));
                    }
                    Nibbles.packGroup(codes, groupSize, data, dataOffset + (long) group * groupSize / 2);
                    scales.set(LittleEndian.SHORT, scalesOffset + 4L * group, HalfFloats.toF16(d));
                    scales.set(LittleEndian.SHORT, scalesOffset + 4L * group + 2, HalfFloats.toF16(m));
                }
                case NF4 -> {
                    float s = HalfFloats.roundToF16(absmax);
                    for (int i = 0; i < groupSize; i++) {
                        codes[i] = (byte) (s == 0 ? Nf4.ZERO_CODE : Nf4.nearestCode(src[offset + i] / s));
                    }
                    Nibbles.packGroup(codes, groupSize, data, dataOffset + (long) group * groupSize / 2);
                    scales.set(LittleEndian.SHORT, scalesOffset + 2L * group, HalfFloats.toF16(s));
                }
                default -> throw new IllegalArgumentException(type.toString());
            }
        }
    }
}
