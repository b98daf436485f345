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

    /** Unpacks the {@code groupSize} codes (each 0..15) of the group packed at {@code offset}: packGroup's inverse. */
    public static void unpackGroup(MemorySegment data, long offset, int groupSize, byte[] codes) {
        int half = groupSize / 2;
        for (int j = 0; j < half; j++) {
            int packed = data.get(ValueLayout.JAVA_BYTE, offset + j);
            codes[j] = (byte) (packed & 0x0F);
            codes[j + half] = (byte) (packed >> 4 & 0x0F);
        }
    }
}
