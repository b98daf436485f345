package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Nibble packing of one group of 4-bit codes (Q4 and NF4): the group's g codes take g/2 bytes, byte j holding code j in
 * its low nibble and code j + g/2 in its high nibble. Pairing j with j + g/2 (not 2j with 2j + 1) lets a kernel unpack
 * a whole group with one mask and one shift per byte vector.
 */
public final class Nibbles {
    private Nibbles() {
    }

    /** Packs {@code groupSize} codes (each 0..15) into {@code groupSize / 2} bytes at {@code offset}. */
    public static void packGroup(byte[] codes, int groupSize, MemorySegment data, long offset) {
        int half = groupSize / 2;
        for (int j = 0; j < half; j++) {
            data.set(ValueLayout.JAVA_BYTE, offset + j, (byte) (codes[j] | codes[j + half] << 4));
        }
    }

    /** Code of element {@code element} (0 <= element < groupSize) of the group packed at {@code groupOffset}. */
    public static int code(MemorySegment data, long groupOffset, int groupSize, int element) {
        int half = groupSize / 2;
        int packed = data.get(ValueLayout.JAVA_BYTE, groupOffset + element % half) & 0xFF;
        return element < half ? packed & 0x0F : packed >>> 4;
    }
}
