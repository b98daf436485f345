package io.zse.convert;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zse.format.QuantErrorBound;
import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class QuantizerEdgeCaseTest {

    static Stream<Quantizer> quantizers() {
        return Stream.of(Quantizer.of(TensorType.Q8, 32), Quantizer.of(TensorType.Q4, 32),
                Quantizer.of(TensorType.Q4, 64), Quantizer.of(TensorType.Q4, 128), Quantizer.of(TensorType.NF4, 64));
    }

    private static float[] filled(int count, float value) {
        float[] values = new float[count];
        Arrays.fill(values, value);
        return values;
    }

    private static void assertWithinBound(Quantizer quantizer, float[] src) {
        float[] decoded = RoundTrip.run(quantizer, src);
        int bad = QuantErrorBound.firstViolation(quantizer.type(), quantizer.groupSize(), src, 0, decoded, 0,
                src.length);
        assertEquals(-1, bad, () -> "element " + bad + " = " + src[bad] + " decoded as " + decoded[bad]);
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void zerosDecodeToZeros(Quantizer quantizer) {
        float[] src = new float[quantizer.groupSize() * 2];
        assertArrayEquals(src, RoundTrip.run(quantizer, src));
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void constantGroupsDecodeToTheConstantWherePossible(Quantizer quantizer) {
        int g = quantizer.groupSize();
        float[] src = new float[g * 3];
        Arrays.fill(src, 0, g, 0.75f);
        Arrays.fill(src, g, 2 * g, -3f);
        Arrays.fill(src, 2 * g, 3 * g, 0.1f); // not exact in F16: within the bound instead
        assertWithinBound(quantizer, src);
        if (quantizer.type() != TensorType.Q8) { // Q8 cannot: 0.75 / 127 is no F16
            float[] decoded = RoundTrip.run(quantizer, src);
            assertArrayEquals(filled(g, 0.75f), Arrays.copyOfRange(decoded, 0, g));
            assertArrayEquals(filled(g, -3f), Arrays.copyOfRange(decoded, g, 2 * g));
        }
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void signedOnlyGroupsAndExtremesStayWithinTheBound(Quantizer quantizer) {
        int g = quantizer.groupSize();
        float[] src = new float[g * 6];
        for (int i = 0; i < g; i++) {
            src[i] = -1 - i * 0.37f; // negative only
            src[g + i] = 5 + i * 0.01f; // positive only, narrow range far from zero
            src[2 * g + i] = (i % 2 == 0 ? 1 : -1) * 60000f * (i + 1) / g; // near the F16 maximum
            src[3 * g + i] = (float) (Math.sin(i) * 1e-6); // tiny: subnormal F16 scales
            src[4 * g + i] = (float) (Math.sin(i) * 1e-30); // tinier than any F16
            src[5 * g + i] = i == 7 ? 100f : (float) Math.cos(i) * 0.01f; // one outlier
        }
        assertWithinBound(quantizer, src);
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void nanAndInfinityAreRejected(Quantizer quantizer) {
        int g = quantizer.groupSize();
        for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
            float[] src = new float[g];
            src[5] = bad;
            var error = assertThrows(IllegalArgumentException.class, () -> RoundTrip.run(quantizer, src));
            assertTrue(error.getMessage().contains(Float.toString(bad)), error.getMessage());
            assertTrue(error.getMessage().contains("element 5"), error.getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void valuesBeyondTheF16ScaleRangeAreRejected(Quantizer quantizer) {
        float[] src = new float[quantizer.groupSize()];
        src[0] = 1e10f;
        var error = assertThrows(IllegalArgumentException.class, () -> RoundTrip.run(quantizer, src));
        assertTrue(error.getMessage().contains("F16"), error.getMessage());
    }

    @ParameterizedTest
    @MethodSource("quantizers")
    void partialGroupsAreRejected(Quantizer quantizer) {
        float[] src = new float[quantizer.groupSize() + 1];
        MemorySegment region = MemorySegment.ofArray(new byte[1024]);
        var error = assertThrows(IllegalArgumentException.class,
                () -> quantizer.quantize(src, 0, src.length, region, 0, region, 0));
        assertTrue(error.getMessage().contains("multiple of the group size"), error.getMessage());
    }

    @Test
    void factoryChecksTypeAndGroupSize() {
        assertInstanceOf(Q8Quantizer.class, Quantizer.of(TensorType.Q8, 32));
        assertInstanceOf(Nf4Quantizer.class, Quantizer.of(TensorType.NF4, 64));
        assertEquals(128, Quantizer.of(TensorType.Q4, 128).groupSize());
        assertEquals(TensorType.Q4, Quantizer.of(TensorType.Q4, 64).type());
        assertThrows(IllegalArgumentException.class, () -> Quantizer.of(TensorType.Q8, 64));
        assertThrows(IllegalArgumentException.class, () -> Quantizer.of(TensorType.Q4, 16));
        assertThrows(IllegalArgumentException.class, () -> Quantizer.of(TensorType.NF4, 32));
        assertThrows(IllegalArgumentException.class, () -> Quantizer.of(TensorType.F16, 0));
    }
}
