package io.zse.convert;

/** Checks shared by every quantizer on the values it is given. */
final class GroupInput {
    private GroupInput() {
    }

    /** Rejects a count that is not a whole number of groups and any NaN or infinite value. */
    static void check(float[] src, int srcOffset, int count, int groupSize) {
        if (count < 0 || count % groupSize != 0) {
            throw new IllegalArgumentException("element count " + count + " is not a multiple of the group size "
                    + groupSize);
        }
        for (int i = srcOffset; i < srcOffset + count; i++) {
            if (!Float.isFinite(src[i])) {
                throw new IllegalArgumentException("cannot quantize " + src[i] + " (element " + (i - srcOffset)
                        + "): only finite values have a quantized form");
            }
        }
    }

    /** A scale rounded to F16 that overflowed: the group's values are too large for the format. */
    static IllegalArgumentException scaleOverflow(String what, double value, int group) {
        return new IllegalArgumentException(what + " " + value + " of group " + group
                + " exceeds the F16 range of the scales (65504)");
    }
}
