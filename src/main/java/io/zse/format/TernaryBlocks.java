package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The byte layout of {@link TensorType#TERNARY} (docs/zse-format.md): 2-bit codes c = t + 1 (t in {-1, 0, 1}) in blocks
 * of 128 elements, 32 bytes each, where byte j of a block holds elements j, j + 32, j + 64 and j + 96 at bits 0-1, 2-3,
 * 4-5 and 6-7. One 32-byte load and four shifts give four runs of 32 consecutive codes, which is what the SIMD kernels
 * want. The tensor's scale s is one F32 (w = t * s).
 */
public final class TernaryBlocks {
    /** Elements per block. */
    public static final int BLOCK = 128;
    /** Bytes per block. */
    public static final int BLOCK_BYTES = 32;

    private TernaryBlocks() {
    }

    /** The code (0..3; writers never write 3) of flat element {@code element}. */
    public static int code(MemorySegment data, long element) {
        int k = (int) (element % BLOCK);
        byte b = data.get(ValueLayout.JAVA_BYTE, element / BLOCK * BLOCK_BYTES + (k & 31));
        return (b >> (2 * (k >> 5))) & 3;
    }

    /** Packs the 128 codes (each 0..2) at {@code codes[offset..]} into one block at {@code byteOffset}. */
    public static void packBlock(byte[] codes, int offset, MemorySegment data, long byteOffset) {
        for (int j = 0; j < BLOCK_BYTES; j++) {
            int b = codes[offset + j] | codes[offset + j + 32] << 2 | codes[offset + j + 64] << 4
                    | codes[offset + j + 96] << 6;
            data.set(ValueLayout.JAVA_BYTE, byteOffset + j, (byte) b);
        }
    }

    /** The tensor's scale s: one little-endian F32. */
    public static float scale(MemorySegment scales) {
        return scales.get(LittleEndian.FLOAT, 0);
    }
}
