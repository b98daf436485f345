package io.zse.format;

import java.util.List;

/** The 4-bit NormalFloat code book (bitsandbytes' NF4): code q stands for {@code value(q) * absmax}. */
public final class Nf4 {
    /** The 16 code values, ascending; code 7 is exactly zero. */
    public static final List<Float> CODEBOOK = List.of(
            -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
            -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
            0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
            0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f);

    /** Code of 0.0. */
    public static final int ZERO_CODE = 7;

    private static final float[] VALUES = new float[16];
    /** MIDPOINTS[i] separates code i from code i + 1. */
    private static final float[] MIDPOINTS = new float[15];
    /** Half the widest gap between neighbouring codes: the worst rounding error for a value in [-1, 1]. */
    public static final float MAX_HALF_GAP;

    static {
        float widest = 0;
        for (int i = 0; i < 16; i++) {
            VALUES[i] = CODEBOOK.get(i);
        }
        for (int i = 0; i < 15; i++) {
            MIDPOINTS[i] = (VALUES[i] + VALUES[i + 1]) / 2;
            widest = Math.max(widest, VALUES[i + 1] - VALUES[i]);
        }
        MAX_HALF_GAP = widest / 2;
    }

    private Nf4() {
    }

    /** The 16 code values then the 15 midpoints, as {@link #nearestCode} uses them (for the native quantizer). */
    public static float[] valuesThenMidpoints() {
        float[] table = new float[31];
        System.arraycopy(VALUES, 0, table, 0, 16);
        System.arraycopy(MIDPOINTS, 0, table, 16, 15);
        return table;
    }

    public static float value(int code) {
        return VALUES[code];
    }

    /** Code whose value is nearest to {@code x} (values beyond [-1, 1] get the end codes); ties go to the higher code. */
    public static int nearestCode(float x) {
        // Binary search over the 15 midpoints: four comparisons.
        int code = x >= MIDPOINTS[7] ? 8 : 0;
        if (x >= MIDPOINTS[code + 3]) {
            code += 4;
        }
        if (x >= MIDPOINTS[code + 1]) {
            code += 2;
        }
        if (x >= MIDPOINTS[code]) {
            code += 1;
        }
        return code;
    }
}
