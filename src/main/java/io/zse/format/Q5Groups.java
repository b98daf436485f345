package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The byte layout of {@link TensorType#Q5} (docs/zse-format.md), ggml's Q5_0/Q5_1 block without its scales: each group
 * of 32 is 20 bytes, 16 of nibbles (byte j: element j in the low nibble, element j + 16 in the high one) and a
 * little-endian u32 whose bit j is bit 4 of element j.
 */
public final class Q5Groups {
    /** Bytes per group of 32. */
    public static final int GROUP_BYTES = 20;

    private Q5Groups() {
    }

    /** The code (0..31) of element {@code j} (0..31) of group {@code group}. */
    public static int code(MemorySegment data, long group, int j) {
        long at = group * GROUP_BYTES;
        int nibbles = data.get(ValueLayout.JAVA_BYTE, at + (j & 15)) & 0xFF;
        int high = data.get(LittleEndian.INT, at + 16) >>> j & 1;
        return (j < 16 ? nibbles & 0xF : nibbles >> 4) | high << 4;
    }
}
