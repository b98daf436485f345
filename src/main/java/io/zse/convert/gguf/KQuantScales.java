package io.zse.convert.gguf;

import java.lang.foreign.MemorySegment;

/** The 6-bit (scale, min) pairs of a Q4_K / Q5_K block: 8 pairs packed into 12 bytes (ggml's get_scale_min_k4). */
final class KQuantScales {
    private KQuantScales() {
    }

    /** Writes pair {@code j} (0..7) of the 12 bytes at {@code at} to {@code out[0]} (scale) and {@code out[1]} (min). */
    static void scaleMin(MemorySegment src, long at, int j, int[] out) {
        if (j < 4) {
            out[0] = GgmlBlockDecoder.u8(src, at + j) & 63;
            out[1] = GgmlBlockDecoder.u8(src, at + j + 4) & 63;
        } else {
            out[0] = (GgmlBlockDecoder.u8(src, at + j + 4) & 0xF) | ((GgmlBlockDecoder.u8(src, at + j - 4) >> 6) << 4);
            out[1] = (GgmlBlockDecoder.u8(src, at + j + 4) >> 4) | ((GgmlBlockDecoder.u8(src, at + j) >> 6) << 4);
        }
    }
}
