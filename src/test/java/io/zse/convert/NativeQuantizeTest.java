package io.zse.convert;

import io.zse.format.TensorType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.IntToDoubleFunction;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native quantizers (libzse_cpu's zse_cpu_convert_*) write exactly the bytes of the Java ones, for every type and
 * group size, on value distributions that exercise each decision: ties in rounding, signed zeros, F16-subnormal
 * scales, outliers that make the clipped scales win, constant and one-sided groups, and odd group counts at odd
 * offsets.
 */
class NativeQuantizeTest {

    @BeforeAll
    static void nativePathRuns() {
        // Where a C compiler exists the build made the library: its absence is then a failure, not a skip.
        assumeTrue(NativeQuantize.available() || !compilerOnPath(), "no C compiler here, so no libzse_cpu");
        assertTrue(NativeQuantize.available(), "libzse_cpu did not load");
        float[] probe = new float[64];
        Arrays.fill(probe, 1);
        NativeQuantize.run(TensorType.Q8, 32, probe, 0, 32, MemorySegment.ofArray(new byte[32]), 0,
                MemorySegment.ofArray(new byte[2]), 0, new float[] {1f / 127}, null, 0);
        assumeTrue(NativeQuantize.available(), "this CPU lacks AVX-512: the Java quantizers run, nothing to compare");
    }

    private static boolean compilerOnPath() {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, "cc")) || Files.isExecutable(Path.of(dir, "gcc")));
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Quantizer q : Stream.concat(quantizers(), Stream.of(Quantizer.of(TensorType.Q4, 64))).toList()) {
            for (String values : VALUES) {
                for (int groups : new int[] {1, 3, 37}) {
                    cases.add(Arguments.of(q, values, groups));
                }
            }
        }
        return cases.stream();
    }

    private static final List<String> VALUES = List.of("gaussian", "gaussian-outliers", "half-steps", "integers",
            "signed-zeros", "subnormal-scales", "constant-groups", "one-sided", "wide-exponents", "f16-edge");

    /** Element i of the named distribution (a few per group are special where the name says so). */
    private static IntToDoubleFunction values(String name, Random random, int group) {
        return switch (name) {
            case "gaussian" -> i -> random.nextGaussian() * 0.02;
            case "gaussian-outliers" -> i -> random.nextGaussian() * (random.nextInt(16) == 0 ? 0.5 : 0.01);
            // multiples of half a plain step: every code is a rounding tie for some candidate scale
            case "half-steps" -> i -> (random.nextInt(255) - 127) * 0.5 / 127 * 0.25;
            case "integers" -> i -> random.nextInt(33) - 16;
            case "signed-zeros" -> i -> switch (random.nextInt(4)) {
                case 0 -> -0.0;
                case 1 -> 0.0;
                default -> random.nextGaussian() * 1e-3;
            };
            case "subnormal-scales" -> i -> random.nextGaussian() * 1e-7;
            case "constant-groups" -> i -> (i / group) % 2 == 0 ? 0.125 : -3.0;
            case "one-sided" -> i -> Math.abs(random.nextGaussian()) + ((i / group) % 2 == 0 ? 10 : -20);
            case "wide-exponents" -> i -> Math.scalb(random.nextDouble() - 0.5, random.nextInt(40) - 30);
            // scales near the top of the F16 range still fit
            case "f16-edge" -> i -> (random.nextDouble() * 2 - 1) * 60000;
            default -> throw new IllegalArgumentException(name);
        };
    }

    @ParameterizedTest(name = "{0} {1} x{2} groups")
    @MethodSource("cases")
    void nativeBytesEqualJavaBytes(Quantizer quantizer, String distribution, int groups) {
        int group = quantizer.groupSize();
        int count = groups * group;
        int srcOffset = 7; // values start mid-array
        Random random = new Random(distribution.hashCode() * 31L + count);
        IntToDoubleFunction next = values(distribution, random, group);
        float[] src = new float[srcOffset + count + 5];
        for (int i = 0; i < count; i++) {
            src[srcOffset + i] = (float) next.applyAsDouble(i);
        }
        TensorType type = quantizer.type();
        long dataOffset = 3;
        long scalesOffset = 6;
        int dataBytes = (int) (dataOffset + type.dataBytes(count));
        int scaleBytes = (int) (scalesOffset + type.scaleBytes(count, group));
        byte[] nativeData = new byte[dataBytes];
        byte[] nativeScales = new byte[scaleBytes];
        byte[] javaData = new byte[dataBytes];
        byte[] javaScales = new byte[scaleBytes];
        MemorySegment data = MemorySegment.ofArray(nativeData);
        MemorySegment scales = MemorySegment.ofArray(nativeScales);
        boolean ran = switch (quantizer) {
            case Q8Quantizer q -> q.quantizeNatively(src, srcOffset, count, data, dataOffset, scales, scalesOffset);
            case Q4Quantizer q -> q.quantizeNatively(src, srcOffset, count, data, dataOffset, scales, scalesOffset);
            case Nf4Quantizer q -> q.quantizeNatively(src, srcOffset, count, data, dataOffset, scales, scalesOffset);
            case Q6KQuantizer q -> throw new AssertionError("Q6_K has no native path");
        };
        assertTrue(ran, "the native path ran");
        quantizer.quantizeInJava(src, srcOffset, count, MemorySegment.ofArray(javaData), dataOffset,
                MemorySegment.ofArray(javaScales), scalesOffset);
        assertArrayEquals(javaScales, nativeScales, "scales");
        assertArrayEquals(javaData, nativeData, "codes");
    }

    /** A scale beyond F16 makes the native path step aside, and the Java quantizer names the group. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("quantizers")
    void overflowIsReportedByTheJavaQuantizer(Quantizer quantizer) {
        int count = 3 * quantizer.groupSize();
        float[] src = new float[count];
        Arrays.fill(src, 0.5f);
        src[count - 1] = 3e7f;
        src[count - 2] = -3e7f;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> quantizer.quantize(src, 0,
                count, MemorySegment.ofArray(new byte[count]), 0, MemorySegment.ofArray(new byte[count]), 0));
        assertTrue(e.getMessage().contains("of group 2"), e.getMessage());
    }

    static Stream<Quantizer> quantizers() {
        return Stream.of(Quantizer.of(TensorType.Q8, 32), Quantizer.of(TensorType.Q4, 32),
                Quantizer.of(TensorType.Q4, 128), Quantizer.of(TensorType.NF4, 64));
    }
}
