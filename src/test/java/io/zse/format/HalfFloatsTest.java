package io.zse.format;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HalfFloatsTest {

    private static short bf16(float value) {
        return HalfFloats.toBf16(value);
    }

    private static short bf16OfBits(int bits) {
        return HalfFloats.toBf16(Float.intBitsToFloat(bits));
    }

    @Test
    void exactValuesKeepTheirTopHalf() {
        assertEquals((short) 0x3F80, bf16(1.0f));
        assertEquals((short) 0xC000, bf16(-2.0f));
        assertEquals((short) 0x0000, bf16(0.0f));
        assertEquals((short) 0x8000, bf16(-0.0f));
        assertEquals((short) 0x7F80, bf16(Float.POSITIVE_INFINITY));
        assertEquals((short) 0xFF80, bf16(Float.NEGATIVE_INFINITY));
    }

    @Test
    void roundsToNearestWithTiesToEven() {
        assertEquals((short) 0x3F80, bf16OfBits(0x3F807FFF), "below half an ulp rounds down");
        assertEquals((short) 0x3F81, bf16OfBits(0x3F808001), "above half an ulp rounds up");
        assertEquals((short) 0x3F80, bf16OfBits(0x3F808000), "tie with even kept part stays");
        assertEquals((short) 0x3F82, bf16OfBits(0x3F818000), "tie with odd kept part goes up to even");
        assertEquals((short) 0xBF82, bf16OfBits(0xBF818000), "sign does not change the rounding");
        assertEquals((short) 0x4000, bf16OfBits(0x3FFFFFFF), "carry into the exponent");
        assertEquals((short) 0x7F80, bf16OfBits(0x7F7FFFFF), "largest float rounds to infinity");
        assertEquals((short) 0x0001, bf16OfBits(0x00008000 + 1), "subnormals round like the rest");
    }

    @Test
    void nanStaysNan() {
        assertTrue(Float.isNaN(HalfFloats.fromBf16(bf16(Float.NaN))));
        // A NaN whose payload sits only in the low half would truncate to infinity.
        assertTrue(Float.isNaN(HalfFloats.fromBf16(bf16OfBits(0x7F800001))));
        assertTrue(Float.isNaN(HalfFloats.fromBf16(bf16OfBits(0xFF80FFFF))));
        assertEquals((short) 0xFFC0, (short) (bf16OfBits(0xFF800001) & 0xFFC0), "sign and quiet bit kept");
    }

    @Test
    void everyBf16RoundTripsExactly() {
        for (int bits = 0; bits < 0x10000; bits++) {
            float value = HalfFloats.fromBf16((short) bits);
            assertEquals(bits << 16, Float.floatToRawIntBits(value));
            if (!Float.isNaN(value)) {
                assertEquals((short) bits, bf16(value));
            }
        }
    }

    @Test
    void roundingErrorIsAtMostHalfAnUlp() {
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < 100_000; i++) {
            float value = Float.intBitsToFloat(random.nextInt(0x7F000000)) * (random.nextBoolean() ? 1 : -1);
            float rounded = HalfFloats.fromBf16(bf16(value));
            assertTrue(Math.abs((double) value - rounded) <= QuantErrorBound.forValue(TensorType.BF16, value),
                    () -> value + " -> " + rounded);
        }
    }

    @Test
    void f16GoesThroughTheJdk() {
        assertEquals((short) 0x3C00, HalfFloats.toF16(1.0f));
        assertEquals(65504f, HalfFloats.fromF16((short) 0x7BFF));
        assertEquals(0.333251953125f, HalfFloats.roundToF16(1f / 3));
    }
}
