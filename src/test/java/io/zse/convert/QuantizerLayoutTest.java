package io.zse.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zse.format.Nf4;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Hand-computed bytes for groups whose values lie exactly on the plain grid: there the plain scales have zero error,
 * so the search must keep them and the bytes are fully determined.
 */
class QuantizerLayoutTest {

    /** Quantizes {@code src} at non-zero offsets and returns the {data, scales} bytes, checking nothing else moved. */
    private static byte[][] quantize(Quantizer quantizer, float[] src) {
        int pad = 3;
        float[] padded = new float[src.length + pad];
        System.arraycopy(src, 0, padded, pad, src.length);
        int dataBytes = (int) quantizer.type().dataBytes(src.length);
        int scaleBytes = (int) quantizer.type().scaleBytes(src.length, quantizer.groupSize());
        byte[] data = new byte[dataBytes + 2 * pad];
        byte[] scales = new byte[scaleBytes + 2 * pad];
        Arrays.fill(data, (byte) 0x5A);
        Arrays.fill(scales, (byte) 0x5A);
        quantizer.quantize(padded, pad, src.length, MemorySegment.ofArray(data), pad, MemorySegment.ofArray(scales), pad);
        for (byte[] region : new byte[][] {data, scales}) {
            for (int i = 0; i < pad; i++) {
                assertEquals((byte) 0x5A, region[i], "byte before the region written");
                assertEquals((byte) 0x5A, region[region.length - 1 - i], "byte after the region written");
            }
        }
        return new byte[][] {
            Arrays.copyOfRange(data, pad, pad + dataBytes), Arrays.copyOfRange(scales, pad, pad + scaleBytes)};
    }

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    @Test
    void q8StoresSignedBytesAndOneLittleEndianF16Scale() {
        float[] src = new float[32];
        byte[] expectedCodes = new byte[32];
        for (int i = 0; i < 32; i++) {
            int q = i == 31 ? 127 : i - 16;
            src[i] = q * 0.5f;
            expectedCodes[i] = (byte) q;
        }
        byte[][] out = quantize(Quantizer.of(TensorType.Q8, 32), src);
        assertArrayEquals(expectedCodes, out[0]);
        assertArrayEquals(bytes(0x00, 0x38), out[1], "d = 0.5 = F16 0x3800");
    }

    @Test
    void q4PacksElementJLowAndJPlusHalfHighThenStoresDAndM() {
        float[] src = new float[32];
        int[] q = new int[32];
        for (int i = 0; i < 32; i++) {
            q[i] = i < 16 ? i : 31 - i; // 0..15, then 15..0, so a swapped nibble order shows
            src[i] = q[i] - 4f; // d = 1, m = -4
        }
        byte[][] out = quantize(Quantizer.of(TensorType.Q4, 32), src);
        byte[] expected = new byte[16];
        for (int j = 0; j < 16; j++) {
            expected[j] = (byte) (q[j] | q[j + 16] << 4);
        }
        assertArrayEquals(expected, out[0]);
        assertEquals((byte) 0xF0, out[0][0], "element 0 (code 0) low, element 16 (code 15) high");
        assertArrayEquals(bytes(0x00, 0x3C, 0x00, 0xC4), out[1], "d = 1.0 (0x3C00) then m = -4.0 (0xC400)");
    }

    @Test
    void q4ScalesOfSeveralGroupsAreInterleavedInGroupOrder() {
        float[] src = new float[64];
        for (int i = 0; i < 32; i++) {
            src[i] = i % 16; // d = 1, m = 0
            src[32 + i] = (i % 16) * 0.5f + 2; // d = 0.5, m = 2
        }
        byte[][] out = quantize(Quantizer.of(TensorType.Q4, 32), src);
        assertArrayEquals(bytes(0x00, 0x3C, 0x00, 0x00, 0x00, 0x38, 0x00, 0x40), out[1]);
        assertEquals(32, out[0].length);
        assertEquals((byte) 0x11, out[0][16 + 1], "group 1, byte 1: elements 1 and 17, both code 1");
    }

    @Test
    void q4WithGroupsOf128PairsElementJWithJPlus64() {
        float[] src = new float[128];
        for (int i = 0; i < 128; i++) {
            src[i] = i < 64 ? 0 : 15; // d = 1, m = 0
        }
        byte[][] out = quantize(Quantizer.of(TensorType.Q4, 128), src);
        byte[] expected = new byte[64];
        Arrays.fill(expected, (byte) 0xF0);
        assertArrayEquals(expected, out[0]);
        assertArrayEquals(bytes(0x00, 0x3C, 0x00, 0x00), out[1]);
    }

    @Test
    void nf4PacksCodesLikeQ4AndStoresTheAbsmax() {
        float[] src = new float[64];
        int[] q = new int[64];
        for (int i = 0; i < 64; i++) {
            q[i] = i < 32 ? i % 16 : 15 - i % 16;
            src[i] = Nf4.value(q[i]) * 2; // absmax 2: exact
        }
        byte[][] out = quantize(Quantizer.of(TensorType.NF4, 64), src);
        byte[] expected = new byte[32];
        for (int j = 0; j < 32; j++) {
            expected[j] = (byte) (q[j] | q[j + 32] << 4);
        }
        assertArrayEquals(expected, out[0]);
        assertArrayEquals(bytes(0x00, 0x40), out[1], "absmax 2.0 = F16 0x4000");
    }

    @Test
    void writesExactlyTheDocumentedByteCounts() {
        for (var typeAndGroup : new int[][] {{3, 32}, {4, 32}, {4, 64}, {4, 128}, {5, 64}}) {
            TensorType type = TensorType.fromCode(typeAndGroup[0]);
            Quantizer quantizer = Quantizer.of(type, typeAndGroup[1]);
            float[] src = new float[256];
            for (int i = 0; i < src.length; i++) {
                src[i] = (float) Math.sin(i);
            }
            byte[][] out = quantize(quantizer, src); // checks the bytes around the regions
            assertEquals(type.dataBytes(256), out[0].length);
            assertEquals(type.scaleBytes(256, typeAndGroup[1]), out[1].length);
        }
    }
}
