package io.zse.format;

/**
 * Conversions between binary32 and the two 16-bit float formats of {@code .zse}: IEEE binary16 (F16, done by the JDK)
 * and bfloat16 (BF16, the top half of a binary32). Both round to nearest, ties to even.
 */
public final class HalfFloats {
    /** The largest finite F16; a value past it (by more than half an ulp) rounds to an infinity. */
    public static final float F16_MAX = 65504f;

    private HalfFloats() {
    }

    public static short toF16(float value) {
        return Float.floatToFloat16(value);
    }

    public static float fromF16(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** {@code value} rounded to the nearest F16, as a float: what a stored F16 scale will read back as. */
    public static float roundToF16(float value) {
        return Float.float16ToFloat(Float.floatToFloat16(value));
    }

    public static short toBf16(float value) {
        int bits = Float.floatToRawIntBits(value);
        if (Float.isNaN(value)) {
            // Truncating could clear every mantissa bit and turn a NaN into an infinity: keep it a (quiet) NaN.
            return (short) ((bits >>> 16) | 0x0040);
        }
        // Round to nearest even: add half an ulp of the result, plus one more if the kept part is odd (tie goes up).
        int roundingBias = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + roundingBias) >>> 16);
    }

    public static float fromBf16(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }
}
