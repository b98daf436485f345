package io.zse.convert.gguf;

import io.zse.format.LittleEndian;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Moves one row of ggml blocks into {@code .zse} data and scale bytes without decoding to float, for the GGUF types
 * whose values a {@code .zse} type holds: Q8_0 is Q8 (d and int8 codes per 32), Q4_0 and Q4_1 are Q4 with groups of
 * 32 (ggml already puts element j in the low nibble and j + 16 in the high nibble of byte j, as Q4 does; Q4_0's
 * {@code (q - 8) d} is Q4's {@code q d + m} with m = -8 d, exact in F16), and Q4_K, Q5_K and Q6_K are the .zse types
 * of the same names: each super-block's code bytes go to the data region and its scale bytes to the scale region,
 * every bit kept. Q5_0 and Q5_1 are Q5: the 16 nibble bytes and the u32 of fifth bits go to the data region (nibbles
 * first), d and m to the scales; Q5_0's {@code (q - 16) d} is Q5's {@code q d + m} with m = -16 d, exact in F16 (as
 * Q4_0's m = -8 d) and in F32 (q d has at most 16 significant bits, so q d + m rounds to (q - 16) d exactly).
 */
final class GgufRowTranscoder {
    private GgufRowTranscoder() {
    }

    /** Whether every block of the tensor can be moved exactly ({@link #move}); false names what needs re-quantizing. */
    static boolean movable(GgmlType type, MemorySegment tensor) {
        long blocks = tensor.byteSize() / type.blockBytes();
        switch (type) {
            case Q8_0 -> {
                // Q8 codes lie in [-127, 127]; ggml never writes -128, but another writer might.
                for (long b = 0; b < blocks; b++) {
                    long at = b * type.blockBytes() + 2;
                    for (int j = 0; j < 32; j++) {
                        if (tensor.get(ValueLayout.JAVA_BYTE, at + j) == Byte.MIN_VALUE) {
                            return false;
                        }
                    }
                }
                return true;
            }
            case Q4_0, Q5_0 -> {
                // m = -8 d (Q4_0) or -16 d (Q5_0) must fit an F16
                float limit = 65504f / (type == GgmlType.Q4_0 ? 8 : 16);
                for (long b = 0; b < blocks; b++) {
                    if (Math.abs(GgmlBlockDecoder.half(tensor, b * type.blockBytes())) > limit) {
                        return false;
                    }
                }
                return true;
            }
            case Q4_1, Q5_1, Q4_K, Q5_K, Q6_K -> {
                return true;
            }
            default -> {
                return false;
            }
        }
    }

    /**
     * Moves row {@code sourceRow} (of {@code rowLength} elements) of a Q8_0, Q5_0, Q4_0, Q4_1 or K-quant tensor into the
     * data and scale bytes of row-group layout at the given offsets.
     */
    static void move(GgmlType type, MemorySegment tensor, long sourceRow, int rowLength, MemorySegment data,
                     long dataOffset, MemorySegment scales, long scalesOffset) {
        long rowBytes = (long) rowLength / type.blockSize() * type.blockBytes();
        long at = sourceRow * rowBytes;
        switch (type) {
            case Q8_0 -> {
                for (int b = 0; b < rowLength / 32; b++) {
                    long block = at + 34L * b;
                    scales.set(LittleEndian.SHORT, scalesOffset + 2L * b, tensor.get(LittleEndian.SHORT, block));
                    MemorySegment.copy(tensor, block + 2, data, dataOffset + 32L * b, 32);
                }
            }
            case Q4_0, Q4_1, Q5_0, Q5_1 -> {
                // ggml: d, m (the _1 types), qh u32 (Q5), qs[16]; .zse: (d, m) per group, qs (then qh for Q5)
                boolean offset = type == GgmlType.Q4_1 || type == GgmlType.Q5_1;
                boolean five = type == GgmlType.Q5_0 || type == GgmlType.Q5_1;
                long qs = (offset ? 4 : 2) + (five ? 4 : 0);
                long groupBytes = five ? 20 : 16;
                float zero = five ? -16f : -8f;
                for (int b = 0; b < rowLength / 32; b++) {
                    long block = at + (long) type.blockBytes() * b;
                    short d = tensor.get(LittleEndian.SHORT, block);
                    short m = offset ? tensor.get(LittleEndian.SHORT, block + 2)
                            : Float.floatToFloat16(Float.float16ToFloat(d) * zero);
                    scales.set(LittleEndian.SHORT, scalesOffset + 4L * b, d);
                    scales.set(LittleEndian.SHORT, scalesOffset + 4L * b + 2, m);
                    MemorySegment.copy(tensor, block + qs, data, dataOffset + groupBytes * b, 16);
                    if (five) {
                        MemorySegment.copy(tensor, block + qs - 4, data, dataOffset + groupBytes * b + 16, 4);
                    }
                }
            }
            case Q4_K, Q5_K, Q6_K -> {
                // Per super-block: the codes to data and the scale bytes to scales, each in ggml's own bit order.
                long codeBytes = type == GgmlType.Q4_K ? 128 : type == GgmlType.Q5_K ? 160 : 192;
                long scaleBytes = type == GgmlType.Q6_K ? 18 : 16;
                for (int b = 0; b < rowLength / 256; b++) {
                    long block = at + (long) type.blockBytes() * b;
                    long codes = dataOffset + codeBytes * b;
                    long scale = scalesOffset + scaleBytes * b;
                    switch (type) {
                        case Q4_K -> {
                            MemorySegment.copy(tensor, block, scales, scale, 16);
                            MemorySegment.copy(tensor, block + 16, data, codes, 128);
                        }
                        case Q5_K -> {
                            MemorySegment.copy(tensor, block, scales, scale, 16);
                            MemorySegment.copy(tensor, block + 48, data, codes, 128);
                            MemorySegment.copy(tensor, block + 16, data, codes + 128, 32);
                        }
                        default -> {
                            MemorySegment.copy(tensor, block, data, codes, 192);
                            MemorySegment.copy(tensor, block + 208, scales, scale, 2);
                            MemorySegment.copy(tensor, block + 192, scales, scale + 2, 16);
                        }
                    }
                }
            }
            default -> throw new IllegalArgumentException(type + " cannot be moved without re-quantizing");
        }
    }
}
