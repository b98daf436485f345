package io.zse.format;

/**
 * The largest error {@code |w - decode(encode(w))|} each {@link TensorType} allows, computed from the source values
 * alone. The bounds are those of plain rounding (absmax / min-max scales): the quantizers search for lower squared
 * error only among scales that stay within them, so a dequantized tensor always matches its source within these
 * bounds, and a layout or scale bug almost always shows up as a violation.
 *
 * <p>Every bound carries two kinds of slack: a relative 2^-10 for the F16 rounding of the scales (2^-11) and of float
 * arithmetic, and an absolute floor for scales small enough to be F16 subnormals (spacing 2^-24).
 */
public final class QuantErrorBound {
    /** Relative slack for the F16 rounding of a scale (2^-11) plus float arithmetic. */
    private static final double SCALE_ROUNDING = 0x1p-10;
    /** Absolute slack: the F16 subnormal spacing 2^-24 times the at most 128 steps it can be multiplied by. */
    private static final double SUBNORMAL_FLOOR = 128 * 0x1p-24;

    private QuantErrorBound() {
    }

    /**
     * Largest allowed error for any element of one group of a quantized type, from the group's values
     * {@code src[offset, offset + groupSize)}:
     * <ul>
     * <li>Q8: half a plain step, absmax / 254.</li>
     * <li>Q4: half a plain step, (max - min) / 30, plus the F16 rounding of m (relative to |min|).</li>
     * <li>NF4: half the widest gap of the code book times absmax ({@link Nf4#MAX_HALF_GAP}, about 0.152 absmax).</li>
     * </ul>
     */
    public static double forGroup(TensorType type, float[] src, int offset, int groupSize) {
        float min = Float.POSITIVE_INFINITY;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = offset; i < offset + groupSize; i++) {
            min = Math.min(min, src[i]);
            max = Math.max(max, src[i]);
        }
        double absmax = Math.max(Math.abs((double) min), Math.abs((double) max));
        double range = (double) max - min;
        return switch (type) {
            case Q8 -> absmax / 254 * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR;
            case Q4 -> range / 30 + SCALE_ROUNDING * (Math.abs((double) min) + range) + SUBNORMAL_FLOOR;
            case NF4 -> Nf4.MAX_HALF_GAP * absmax * (1 + SCALE_ROUNDING) + SUBNORMAL_FLOOR;
            case F32, F16, BF16 -> throw new IllegalArgumentException(type + " is not quantized in groups");
            case Q5, Q4_K, Q5_K, Q6_K -> throw new IllegalArgumentException(type + " is not written by a quantizer");
            case TERNARY -> throw new IllegalArgumentException("TERNARY has one scale per tensor: no per-group bound");
        };
    }

    /**
     * Largest allowed error for one value of an unquantized type: 0 for F32, half an ulp for F16 (relative 2^-11, at
     * least 2^-25 among subnormals) and BF16 (relative 2^-8, at least 2^-134). Values beyond the type's range have no
     * finite bound: they overflow to infinity, which {@link #firstViolation} reports.
     */
    public static double forValue(TensorType type, float value) {
        double magnitude = Math.abs((double) value);
        return switch (type) {
            case F32 -> 0;
            case F16 -> Math.max(magnitude * 0x1p-11, 0x1p-25);
            case BF16 -> Math.max(magnitude * 0x1p-8, 0x1p-134);
            case Q8, Q4, Q5, NF4, Q4_K, Q5_K, Q6_K, TERNARY ->
                    throw new IllegalArgumentException(type + " is quantized: use forGroup");
        };
    }

    /**
     * Index (relative to the offsets) of the first decoded value farther from its source than the type's bound allows,
     * or -1 if there is none. For quantized types {@code srcOffset} starts a group and {@code count} is a multiple of
     * the group size. NaN decodes only to NaN.
     */
    public static int firstViolation(TensorType type, int groupSize, float[] src, int srcOffset,
            float[] decoded, int decodedOffset, int count) {
        double bound = 0;
        for (int i = 0; i < count; i++) {
            float w = src[srcOffset + i];
            float decodedValue = decoded[decodedOffset + i];
            if (type.isQuantized()) {
                if (i % groupSize == 0) {
                    bound = forGroup(type, src, srcOffset + i, groupSize);
                }
            } else {
                bound = forValue(type, w);
            }
            if (Float.isNaN(w) && Float.isNaN(decodedValue)) {
                continue;
            }
            // Written so that NaN or infinite errors count as violations.
            if (!(Math.abs((double) w - decodedValue) <= bound)) {
                return i;
            }
        }
        return -1;
    }
}
