package io.zse.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zse.format.QuantErrorBound;
import io.zse.format.TensorType;
import java.util.Random;
import java.util.function.DoubleSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Random data through every quantized type and group size: decoded values stay within the type's error bound. */
class QuantizerRoundTripTest {

    static Stream<Arguments> typesAndGroupSizes() {
        return Stream.of(
                Arguments.of(TensorType.Q8, 32),
                Arguments.of(TensorType.Q4, 32),
                Arguments.of(TensorType.Q4, 64),
                Arguments.of(TensorType.Q4, 128),
                Arguments.of(TensorType.NF4, 64));
    }

    private static float[] sample(int count, DoubleSupplier distribution) {
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = (float) distribution.getAsDouble();
        }
        return values;
    }

    private static void assertWithinBound(Quantizer quantizer, float[] src, String what) {
        float[] decoded = RoundTrip.run(quantizer, src);
        int bad = QuantErrorBound.firstViolation(quantizer.type(), quantizer.groupSize(), src, 0, decoded, 0,
                src.length);
        assertEquals(-1, bad, () -> what + ": element " + bad + " = " + src[bad] + " decoded as " + decoded[bad]);
        double baseline = RoundTrip.squaredError(src, RoundTrip.run(quantizer.type(), quantizer.groupSize(),
                new MinMaxBaseline(quantizer.type(), quantizer.groupSize()), src));
        double searched = RoundTrip.squaredError(src, decoded);
        assertTrue(searched <= baseline, () -> what + ": searched " + searched + " > baseline " + baseline);
    }

    @ParameterizedTest
    @MethodSource("typesAndGroupSizes")
    void randomDataStaysWithinTheBound(TensorType type, int groupSize) {
        Quantizer quantizer = Quantizer.of(type, groupSize);
        Random random = new Random(11 + groupSize);
        int count = 128 * 64;
        assertWithinBound(quantizer, sample(count, () -> random.nextGaussian() * 0.02), "gaussian 0.02");
        assertWithinBound(quantizer, sample(count, () -> random.nextGaussian() * 3 + 1), "gaussian mean 1");
        assertWithinBound(quantizer, sample(count, () -> random.nextDouble() * 2 - 1), "uniform");
        // heavy tails: the case clipping is for
        assertWithinBound(quantizer, sample(count, () -> random.nextGaussian() / (random.nextDouble() + 0.05)),
                "heavy-tailed");
        // magnitudes from 1e-7 to 1e3, including F16-subnormal scales
        assertWithinBound(quantizer, sample(count, () -> Math.pow(10, random.nextInt(11) - 7) * random.nextGaussian()),
                "mixed magnitudes");
        float[] perGroupMagnitude = new float[count];
        for (int i = 0; i < count; i++) {
            perGroupMagnitude[i] = (float) (Math.pow(10, (i / groupSize) % 11 - 7) * random.nextGaussian());
        }
        assertWithinBound(quantizer, perGroupMagnitude, "per-group magnitudes 1e-7..1e3");
    }

    @ParameterizedTest
    @MethodSource("typesAndGroupSizes")
    void offsetsSelectTheRightElementsAndBytes(TensorType type, int groupSize) {
        Quantizer quantizer = Quantizer.of(type, groupSize);
        Random random = new Random(5);
        float[] src = sample(groupSize * 4, random::nextGaussian);
        float[] wholeDecoded = RoundTrip.run(quantizer, src);

        // quantize the last two groups from the middle of src into the middle of the regions
        int firstGroup = 2;
        int srcOffset = firstGroup * groupSize;
        var data = java.lang.foreign.Arena.ofAuto().allocate(type.dataBytes(src.length));
        var scales = java.lang.foreign.Arena.ofAuto().allocate(type.scaleBytes(src.length, groupSize));
        quantizer.quantize(src, srcOffset, 2 * groupSize, data, type.dataBytes(srcOffset), scales,
                type.scaleBytes(srcOffset, groupSize));
        float[] partDecoded = new float[2 * groupSize];
        io.zse.format.TensorDecoder.decode(type, groupSize, data, scales, srcOffset, 2 * groupSize, partDecoded, 0);
        for (int i = 0; i < partDecoded.length; i++) {
            assertEquals(wholeDecoded[srcOffset + i], partDecoded[i], "element " + (srcOffset + i));
        }
    }
}
