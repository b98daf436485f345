package io.zse.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Decodes hand-written bytes, so the layouts are pinned independently of the quantizers. */
class TensorDecoderTest {

    private static MemorySegment bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return MemorySegment.ofArray(b);
    }

    private static float[] decode(TensorType type, int groupSize, MemorySegment data, MemorySegment scales,
            long first, int count) {
        float[] out = new float[count + 1];
        out[0] = 42; // the offset must be honoured
        TensorDecoder.decode(type, groupSize, data, scales, first, count, out, 1);
        assertEquals(42, out[0]);
        return java.util.Arrays.copyOfRange(out, 1, count + 1);
    }

    @Test
    void unquantizedTypesAreLittleEndian() {
        MemorySegment none = MemorySegment.NULL;
        assertArrayEquals(new float[] {1.5f, -2f},
                decode(TensorType.F32, 0, bytes(0, 0, 0xC0, 0x3F, 0, 0, 0, 0xC0), none, 0, 2));
        assertArrayEquals(new float[] {-2f},
                decode(TensorType.F32, 0, bytes(0, 0, 0xC0, 0x3F, 0, 0, 0, 0xC0), none, 1, 1));
        assertArrayEquals(new float[] {1f, -2f, 65504f},
                decode(TensorType.F16, 0, bytes(0x00, 0x3C, 0x00, 0xC0, 0xFF, 0x7B), none, 0, 3));
        assertArrayEquals(new float[] {1f, 3.140625f},
                decode(TensorType.BF16, 0, bytes(0x80, 0x3F, 0x49, 0x40), none, 0, 2));
    }

    @Test
    void q8IsCodeTimesTheGroupScale() {
        byte[] data = new byte[64];
        data[0] = -3;
        data[32 + 5] = 10;
        data[63] = 127;
        MemorySegment scales = bytes(0x00, 0x38, 0x00, 0x40); // 0.5, then 2.0
        float[] all = decode(TensorType.Q8, 32, MemorySegment.ofArray(data), scales, 0, 64);
        assertEquals(-1.5f, all[0]);
        assertEquals(0f, all[1]);
        assertEquals(20f, all[37]);
        assertEquals(254f, all[63]);
        float[] second = decode(TensorType.Q8, 32, MemorySegment.ofArray(data), scales, 32, 32);
        assertEquals(20f, second[5]);
    }

    @Test
    void q4PairsElementJWithJPlusHalfGroupAndStoresDThenM() {
        byte[] data = new byte[32]; // two groups of 32
        data[0] = 0x52; // element 0 <- 2 (low), element 16 <- 5 (high)
        data[16 + 15] = (byte) 0xF1; // group 1: element 15 <- 1, element 31 <- 15
        MemorySegment scales = bytes(0x00, 0x3C, 0x00, 0xBC, /* group 1: */ 0x00, 0x38, 0x00, 0x40); // (1, -1), (0.5, 2)
        float[] all = decode(TensorType.Q4, 32, MemorySegment.ofArray(data), scales, 0, 64);
        assertEquals(1f, all[0]);
        assertEquals(4f, all[16]);
        assertEquals(-1f, all[1]);
        assertEquals(2.5f, all[32 + 15]);
        assertEquals(9.5f, all[32 + 31]);
        assertEquals(2f, all[32]);
    }

    @Test
    void q4WithLargerGroupsPairsAcrossTheWholeGroup() {
        byte[] data = new byte[64]; // one group of 128
        data[63] = (byte) 0x3C; // element 63 <- 12, element 127 <- 3
        MemorySegment scales = bytes(0x00, 0x3C, 0x00, 0x00); // d = 1, m = 0
        float[] all = decode(TensorType.Q4, 128, MemorySegment.ofArray(data), scales, 0, 128);
        assertEquals(12f, all[63]);
        assertEquals(3f, all[127]);
        assertEquals(0f, all[64]);
    }

    @Test
    void nf4IsCodebookValueTimesAbsmax() {
        byte[] data = new byte[32]; // one group of 64
        java.util.Arrays.fill(data, (byte) 0x77); // code 7 (zero) everywhere
        data[3] = (byte) 0xF0; // element 3 <- code 0, element 35 <- code 15
        data[4] = (byte) 0x98; // element 4 <- code 8, element 36 <- code 9
        MemorySegment scales = bytes(0x00, 0x40); // absmax 2
        float[] all = decode(TensorType.NF4, 64, MemorySegment.ofArray(data), scales, 0, 64);
        assertEquals(-2f, all[3]);
        assertEquals(2f, all[35]);
        assertEquals(Nf4.value(8) * 2, all[4]);
        assertEquals(Nf4.value(9) * 2, all[36]);
        assertEquals(0f, all[0]);
    }

    @Test
    void rejectsBadGroupSizesAndUnalignedRanges() {
        MemorySegment data = MemorySegment.ofArray(new byte[64]);
        MemorySegment scales = MemorySegment.ofArray(new byte[8]);
        float[] out = new float[64];
        assertThrows(IllegalArgumentException.class,
                () -> TensorDecoder.decode(TensorType.Q8, 64, data, scales, 0, 64, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> TensorDecoder.decode(TensorType.Q4, 32, data, scales, 16, 32, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> TensorDecoder.decode(TensorType.F16, 32, data, scales, 0, 4, out, 0));
    }
}
