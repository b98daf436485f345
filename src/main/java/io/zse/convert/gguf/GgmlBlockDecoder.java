package io.zse.convert.gguf;

import io.zse.format.KQuantBlocks;
import io.zse.format.LittleEndian;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Decodes ggml blocks to F32 exactly as ggml's reference {@code dequantize_row_*} functions do (same float operations
 * in the same order, so the values are bit-identical). Block layouts, byte offsets within one block:
 * <pre>
 * Q4_0 (32 el., 18 B): d f16 @0, qs u8[16] @2      x[j] = (lo(qs[j]) - 8) d, x[j+16] = (hi(qs[j]) - 8) d
 * Q4_1 (32, 20 B):     d f16 @0, m f16 @2, qs @4    x = q d + m (same nibble order)
 * Q5_0 (32, 22 B):     d @0, qh u32 @2, qs @6       fifth bit of x[j] in qh bit j, of x[j+16] in bit j+12 (after &lt;&lt;4 shift)
 * Q5_1 (32, 24 B):     d @0, m @2, qh @4, qs @8
 * Q8_0 (32, 34 B):     d @0, qs i8[32] @2           x = q d
 * Q4_K (256, 144 B):   d @0, dmin @2, scales u8[12] @4 (eight 6-bit scale/min pairs), qs @16
 * Q5_K (256, 176 B):   d @0, dmin @2, scales @4, qh u8[32] @16, qs @48
 * Q6_K (256, 210 B):   ql u8[128] @0, qh u8[64] @128, scales i8[16] @192, d f16 @208
 * TQ1_0 (256, 54 B):   qs u8[48] @0, qh u8[4] @48, d f16 @52   five base-3 digits per qs byte, four per qh byte (below)
 * TQ2_0 (256, 66 B):   qs u8[64] @0, d f16 @64                  byte 32c + m holds element 128c + 32l + m at bits
 *                                                               2l..2l+1 (TERNARY's order), x = (q - 1) d
 * </pre>
 * TQ1_0 stores a byte b = ceil(256 Σ c_n 3^(4-n) / 243) for digits c_0..c_4 (c = t + 1); digit n is
 * {@code ((b · 3^n mod 256) · 3) >> 8}, x = (digit - 1) d. Bytes 0..31 give elements 32n + m, bytes 32..47 elements 160 + 16n + m,
 * qh bytes 0..3 elements 240 + 4n + j (digits 0..3).
 */
public final class GgmlBlockDecoder {
    private GgmlBlockDecoder() {
    }

    /**
     * Decodes {@code count} elements starting at element {@code first} of {@code src} (a tensor's bytes) into
     * {@code out[outOffset...]}. Both must be whole blocks.
     */
    public static void decode(GgmlType type, MemorySegment src, long first, int count, float[] out, int outOffset) {
        int block = type.blockSize();
        if (first % block != 0 || count % block != 0) {
            throw new IllegalArgumentException(type + ": " + first + " and " + count + " must be whole blocks of " + block);
        }
        switch (type) {
            case F32 -> MemorySegment.copy(src, LittleEndian.FLOAT, first * 4, out, outOffset, count);
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    out[outOffset + i] = Float.float16ToFloat(src.get(LittleEndian.SHORT, (first + i) * 2));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    out[outOffset + i] = Float.intBitsToFloat((src.get(LittleEndian.SHORT, (first + i) * 2) & 0xFFFF) << 16);
                }
            }
            default -> {
                long blockOffset = first / block * type.blockBytes();
                for (int b = 0; b < count / block; b++) {
                    decodeBlock(type, src, blockOffset + (long) b * type.blockBytes(), out, outOffset + b * block);
                }
            }
        }
    }

    private static void decodeBlock(GgmlType type, MemorySegment src, long at, float[] y, int o) {
        switch (type) {
            case Q4_0 -> {
                float d = half(src, at);
                for (int j = 0; j < 16; j++) {
                    int q = u8(src, at + 2 + j);
                    y[o + j] = ((q & 0xF) - 8) * d;
                    y[o + j + 16] = ((q >> 4) - 8) * d;
                }
            }
            case Q4_1 -> {
                float d = half(src, at);
                float m = half(src, at + 2);
                for (int j = 0; j < 16; j++) {
                    int q = u8(src, at + 4 + j);
                    y[o + j] = (q & 0xF) * d + m;
                    y[o + j + 16] = (q >> 4) * d + m;
                }
            }
            case Q5_0 -> {
                float d = half(src, at);
                int qh = src.get(LittleEndian.INT, at + 2);
                for (int j = 0; j < 16; j++) {
                    int q = u8(src, at + 6 + j);
                    int h0 = (qh >>> j << 4) & 0x10;
                    int h1 = (qh >>> (j + 12)) & 0x10;
                    y[o + j] = (((q & 0xF) | h0) - 16) * d;
                    y[o + j + 16] = (((q >> 4) | h1) - 16) * d;
                }
            }
            case Q5_1 -> {
                float d = half(src, at);
                float m = half(src, at + 2);
                int qh = src.get(LittleEndian.INT, at + 4);
                for (int j = 0; j < 16; j++) {
                    int q = u8(src, at + 8 + j);
                    int h0 = (qh >>> j << 4) & 0x10;
                    int h1 = (qh >>> (j + 12)) & 0x10;
                    y[o + j] = ((q & 0xF) | h0) * d + m;
                    y[o + j + 16] = ((q >> 4) | h1) * d + m;
                }
            }
            case Q8_0 -> {
                float d = half(src, at);
                for (int j = 0; j < 32; j++) {
                    y[o + j] = src.get(ValueLayout.JAVA_BYTE, at + 2 + j) * d;
                }
            }
            case Q4_K -> {
                float d = half(src, at);
                float min = half(src, at + 2);
                int[] scaleMin = new int[2];
                for (int chunk = 0; chunk < 4; chunk++) {
                    long qs = at + 16 + 32L * chunk;
                    KQuantBlocks.scaleMin(src, at + 4, 2 * chunk, scaleMin);
                    float d1 = d * scaleMin[0];
                    float m1 = min * scaleMin[1];
                    KQuantBlocks.scaleMin(src, at + 4, 2 * chunk + 1, scaleMin);
                    float d2 = d * scaleMin[0];
                    float m2 = min * scaleMin[1];
                    int base = o + 64 * chunk;
                    for (int l = 0; l < 32; l++) {
                        y[base + l] = d1 * (u8(src, qs + l) & 0xF) - m1;
                    }
                    for (int l = 0; l < 32; l++) {
                        y[base + 32 + l] = d2 * (u8(src, qs + l) >> 4) - m2;
                    }
                }
            }
            case Q5_K -> {
                float d = half(src, at);
                float min = half(src, at + 2);
                int[] scaleMin = new int[2];
                int u1 = 1;
                int u2 = 2;
                for (int chunk = 0; chunk < 4; chunk++) {
                    long ql = at + 48 + 32L * chunk;
                    long qh = at + 16;
                    KQuantBlocks.scaleMin(src, at + 4, 2 * chunk, scaleMin);
                    float d1 = d * scaleMin[0];
                    float m1 = min * scaleMin[1];
                    KQuantBlocks.scaleMin(src, at + 4, 2 * chunk + 1, scaleMin);
                    float d2 = d * scaleMin[0];
                    float m2 = min * scaleMin[1];
                    int base = o + 64 * chunk;
                    for (int l = 0; l < 32; l++) {
                        y[base + l] = d1 * ((u8(src, ql + l) & 0xF) + ((u8(src, qh + l) & u1) != 0 ? 16 : 0)) - m1;
                    }
                    for (int l = 0; l < 32; l++) {
                        y[base + 32 + l] = d2 * ((u8(src, ql + l) >> 4) + ((u8(src, qh + l) & u2) != 0 ? 16 : 0)) - m2;
                    }
                    u1 <<= 2;
                    u2 <<= 2;
                }
            }
            case Q6_K -> {
                float d = half(src, at + 208);
                for (int half = 0; half < 2; half++) {
                    long ql = at + 64L * half;
                    long qh = at + 128 + 32L * half;
                    long sc = at + 192 + 8L * half;
                    int base = o + 128 * half;
                    for (int l = 0; l < 32; l++) {
                        int is = l / 16;
                        int h = u8(src, qh + l);
                        int q1 = ((u8(src, ql + l) & 0xF) | ((h & 3) << 4)) - 32;
                        int q2 = ((u8(src, ql + l + 32) & 0xF) | (((h >> 2) & 3) << 4)) - 32;
                        int q3 = ((u8(src, ql + l) >> 4) | (((h >> 4) & 3) << 4)) - 32;
                        int q4 = ((u8(src, ql + l + 32) >> 4) | (((h >> 6) & 3) << 4)) - 32;
                        y[base + l] = d * i8(src, sc + is) * q1;
                        y[base + l + 32] = d * i8(src, sc + is + 2) * q2;
                        y[base + l + 64] = d * i8(src, sc + is + 4) * q3;
                        y[base + l + 96] = d * i8(src, sc + is + 6) * q4;
                    }
                }
            }
            case TQ1_0 -> {
                float d = half(src, at + 52);
                int k = o;
                for (int n = 0; n < 5; n++) {
                    for (int m = 0; m < 32; m++) {
                        y[k++] = (trit(u8(src, at + m), n) - 1) * d;
                    }
                }
                for (int n = 0; n < 5; n++) {
                    for (int m = 0; m < 16; m++) {
                        y[k++] = (trit(u8(src, at + 32 + m), n) - 1) * d;
                    }
                }
                for (int n = 0; n < 4; n++) {
                    for (int j = 0; j < 4; j++) {
                        y[k++] = (trit(u8(src, at + 48 + j), n) - 1) * d;
                    }
                }
            }
            case TQ2_0 -> {
                float d = half(src, at + 64);
                for (int c = 0; c < 2; c++) {
                    for (int l = 0; l < 4; l++) {
                        for (int m = 0; m < 32; m++) {
                            y[o + 128 * c + 32 * l + m] = (((u8(src, at + 32L * c + m) >> (2 * l)) & 3) - 1) * d;
                        }
                    }
                }
            }
            default -> throw new IllegalArgumentException("cannot decode ggml type " + type);
        }
    }

    private static final int[] POW3 = {1, 3, 9, 27, 81};

    /** Base-3 digit n (0 the most significant) of a TQ1_0 byte, as ggml extracts it: ((b · 3^n mod 256) · 3) >> 8. */
    private static int trit(int b, int n) {
        return ((b * POW3[n]) & 0xFF) * 3 >> 8;
    }

    static float half(MemorySegment src, long at) {
        return Float.float16ToFloat(src.get(LittleEndian.SHORT, at));
    }

    static int u8(MemorySegment src, long at) {
        return src.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    private static int i8(MemorySegment src, long at) {
        return src.get(ValueLayout.JAVA_BYTE, at);
    }
}
