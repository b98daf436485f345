package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The K-quant super-blocks of 256 elements (Q4_K, Q5_K, Q6_K) as a {@code .zse} file holds them: ggml's bits, with the
 * codes of each super-block in the data region and its scales in the scale region (docs/zse-format.md). Decoding
 * follows ggml's {@code dequantize_row_*} operation for operation, so the values are bit-identical to ggml's.
 * <pre>
 * Q4_K data  128 B: byte 32c + l holds element 64c + l (low nibble) and 64c + 32 + l (high nibble), c &lt; 4
 *      scales 16 B: d f16, dmin f16, 12 bytes of eight 6-bit (scale, min) pairs; sub-block j = elements 32j..
 * Q5_K data  160 B: the Q4_K nibbles, then qh[32]: bit 2c of qh[l] is the fifth bit of element 64c + l, bit 2c+1
 *                   that of element 64c + 32 + l; scales as Q4_K
 * Q6_K data  192 B: ql[128], qh[64]; scales 18 B: d f16, then 16 int8 scales, one per 16 elements
 * </pre>
 */
public final class KQuantBlocks {
    public static final int SUPER_BLOCK = 256;

    private KQuantBlocks() {
    }

    /**
     * Pair {@code j} (0..7) of the 12 packed bytes at {@code at} (ggml's get_scale_min_k4): the scale to
     * {@code out[0]}, the min to {@code out[1]}, each 0..63.
     */
    public static void scaleMin(MemorySegment src, long at, int j, int[] out) {
        out[0] = scale(src, at, j);
        out[1] = min(src, at, j);
    }

    /** The 6-bit scale of sub-block {@code j} from the 12 packed bytes at {@code at}. */
    public static int scale(MemorySegment src, long at, int j) {
        return j < 4 ? u8(src, at + j) & 63 : (u8(src, at + j + 4) & 0xF) | ((u8(src, at + j - 4) >> 6) << 4);
    }

    /** The 6-bit min of sub-block {@code j} from the 12 packed bytes at {@code at}. */
    public static int min(MemorySegment src, long at, int j) {
        return j < 4 ? u8(src, at + j + 4) & 63 : (u8(src, at + j + 4) >> 4) | ((u8(src, at + j) >> 6) << 4);
    }

    /** Decodes super-block {@code s} of a tensor's data and scales into out[offset .. offset + 256). */
    public static void decode(TensorType type, MemorySegment data, MemorySegment scales, long s, float[] out,
                              int offset) {
        switch (type) {
            case Q4_K, Q5_K -> decodeQ45(type == TensorType.Q5_K, data, scales, s, out, offset);
            case Q6_K -> decodeQ6(data, scales, s, out, offset);
            default -> throw new IllegalArgumentException(type + " is not a K-quant type");
        }
    }

    private static void decodeQ45(boolean fifthBit, MemorySegment data, MemorySegment scales, long s, float[] y,
                                  int o) {
        long sc = s * 16;
        long qs = s * (fifthBit ? 160 : 128);
        long qh = qs + 128;
        float d = HalfFloats.fromF16(scales.get(LittleEndian.SHORT, sc));
        float min = HalfFloats.fromF16(scales.get(LittleEndian.SHORT, sc + 2));
        int[] scaleMin = new int[2];
        for (int c = 0; c < 4; c++) {
            scaleMin(scales, sc + 4, 2 * c, scaleMin);
            float d1 = d * scaleMin[0];
            float m1 = min * scaleMin[1];
            scaleMin(scales, sc + 4, 2 * c + 1, scaleMin);
            float d2 = d * scaleMin[0];
            float m2 = min * scaleMin[1];
            int base = o + 64 * c;
            for (int l = 0; l < 32; l++) {
                int packed = u8(data, qs + 32L * c + l);
                int high = fifthBit ? u8(data, qh + l) >> (2 * c) : 0;
                y[base + l] = d1 * ((packed & 0xF) + ((high & 1) << 4)) - m1;
                y[base + 32 + l] = d2 * ((packed >> 4) + ((high & 2) << 3)) - m2;
            }
        }
    }

    private static void decodeQ6(MemorySegment data, MemorySegment scales, long s, float[] y, int o) {
        long sc = s * 18;
        float d = HalfFloats.fromF16(scales.get(LittleEndian.SHORT, sc));
        for (int half = 0; half < 2; half++) {
            long ql = s * 192 + 64L * half;
            long qh = s * 192 + 128 + 32L * half;
            long is0 = sc + 2 + 8L * half;
            int base = o + 128 * half;
            for (int l = 0; l < 32; l++) {
                long is = is0 + l / 16;
                int h = u8(data, qh + l);
                int q1 = ((u8(data, ql + l) & 0xF) | ((h & 3) << 4)) - 32;
                int q2 = ((u8(data, ql + l + 32) & 0xF) | (((h >> 2) & 3) << 4)) - 32;
                int q3 = ((u8(data, ql + l) >> 4) | (((h >> 4) & 3) << 4)) - 32;
                int q4 = ((u8(data, ql + l + 32) >> 4) | (((h >> 6) & 3) << 4)) - 32;
                y[base + l] = d * i8(scales, is) * q1;
                y[base + l + 32] = d * i8(scales, is + 2) * q2;
                y[base + l + 64] = d * i8(scales, is + 4) * q3;
                y[base + l + 96] = d * i8(scales, is + 6) * q4;
            }
        }
    }

    private static int u8(MemorySegment src, long at) {
        return src.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    private static int i8(MemorySegment src, long at) {
        return src.get(ValueLayout.JAVA_BYTE, at);
    }
}
