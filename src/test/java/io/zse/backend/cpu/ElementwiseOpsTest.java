package io.zse.backend.cpu;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.BiConsumer;

import static io.zse.backend.cpu.HostActivations.FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native element-wise ops (ops.h) of every kernel set this CPU runs against the Java ones they replace: the same
 * float operations, so add, scale, relu²-GLU and RMSNorm agree to the last bit or one rounding of the norm's scale,
 * RoPE to the rounding of cos/sin, and the gatings within a few ulp of the exponential. Lengths cover vector tails.
 */
class ElementwiseOpsTest {
    private static final int[] LENGTHS = {1, 7, 16, 33, 2048, 8195};
    private static NativeCpuLibrary library;

    @BeforeAll
    static void load() {
        assumeTrue(TestKernels.nativeUnavailable().isEmpty(),
                () -> "no libzse_cpu: " + TestKernels.nativeUnavailable());
        library = NativeLibraryProbe.result().library().orElseThrow();
    }

    @AfterEach
    void best() {
        library.use(library.supported().getFirst());
    }

    static List<String> sets() {
        return NativeLibraryProbe.result().library().map(NativeCpuLibrary::supported).orElse(List.of("generic"));
    }

    private static NativeKernels on(String isa) {
        library.use(isa);
        return new NativeKernels(library, ScalarKernels.INSTANCE);
    }

    private static MemorySegment random(Arena arena, long floats, double range, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        MemorySegment s = arena.allocate(floats * Float.BYTES, 64);
        for (long k = 0; k < floats; k++) {
            s.setAtIndex(FLOAT, k, (float) ((random.nextDouble() * 2 - 1) * range));
        }
        return s;
    }

    private static MemorySegment copy(Arena arena, MemorySegment s) {
        return arena.allocate(s.byteSize(), 64).copyFrom(s);
    }

    /** Every element within ulps units in the last place of the Java result, or within {@code floor}. */
    private static void assertClose(MemorySegment expected, MemorySegment actual, int ulps, float floor, String what) {
        for (long k = 0; k < expected.byteSize() / Float.BYTES; k++) {
            float e = expected.getAtIndex(FLOAT, k);
            float a = actual.getAtIndex(FLOAT, k);
            assertTrue(Math.abs(e - a) <= Math.max(ulps * Math.ulp(e), floor), what + ": element " + k + " is " + a
                    + ", Java gives " + e);
        }
    }

    /** Runs the Java op and the native one on equal copies of x (and y) and compares x afterwards. */
    private static void compare(String isa, String what, double range, int ulps, float floor,
                                BiConsumer<MemorySegment, MemorySegment> java,
                                TriConsumer<NativeKernels, MemorySegment, MemorySegment> nativeOp) {
        NativeKernels kernels = on(isa);
        for (int length : LENGTHS) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment x = random(arena, length, range, length);
                MemorySegment y = random(arena, length, 3, length + 1);
                MemorySegment expected = copy(arena, x);
                java.accept(expected, y);
                nativeOp.accept(kernels, x, y);
                assertClose(expected, x, ulps, floor, what + " on " + isa + ", length " + length);
            }
        }
    }

    @FunctionalInterface
    interface TriConsumer<A, B, C> {
        void accept(A a, B b, C c);
    }

    @ParameterizedTest
    @MethodSource("sets")
    void addScaleAndReluSquaredMatchJavaExactly(String isa) {
        compare(isa, "add", 50, 0, 0, (x, y) -> JavaElementwise.add(x, y, len(x)), (k, x, y) -> k.add(x, y, len(x)));
        compare(isa, "scale", 50, 0, 0, (x, y) -> JavaElementwise.scale(x, len(x), -0.37f),
                (k, x, y) -> k.scale(x, len(x), -0.37f));
        compare(isa, "relu2", 50, 0, 0, (x, y) -> JavaElementwise.reluSquaredGlu(x, y, len(x)),
                (k, x, y) -> k.reluSquaredGlu(x, y, len(x)));
    }

    @ParameterizedTest
    @MethodSource("sets")
    void gatingsStayWithinAFewUlpOfJava(String isa) {
        // up to |g| = 30: silu and gelu saturate there, and e^-g spans the exponential's whole useful range
        compare(isa, "swiglu", 30, 4, 0, (x, y) -> ScalarKernels.INSTANCE.swiglu(x, y, len(x)),
                (k, x, y) -> k.swiglu(x, y, len(x)));
        // where tanh is near -1, 1 + tanh cancels: one ulp of tanh is ~1e-7 of g · up there
        compare(isa, "geglu", 30, 16, 1e-5f, (x, y) -> ScalarKernels.INSTANCE.geglu(x, y, len(x)),
                (k, x, y) -> k.geglu(x, y, len(x)));
    }

    @ParameterizedTest
    @MethodSource("sets")
    void rmsNormMatchesJava(String isa) {
        NativeKernels kernels = on(isa);
        for (int dim : new int[]{7, 64, 2048, 3001}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment x = random(arena, 3L * dim, 4, dim);
                float[] weight = new float[dim];
                SplittableRandom random = new SplittableRandom(dim);
                for (int k = 0; k < dim; k++) {
                    weight[k] = (float) random.nextDouble(-2, 2);
                }
                MemorySegment expected = arena.allocate(3L * dim * Float.BYTES);
                MemorySegment actual = arena.allocate(3L * dim * Float.BYTES);
                JavaElementwise.rmsNorm(x, 3, weight, 1e-6f, expected);
                kernels.rmsNorm(x, 3, weight, 1e-6f, actual);
                // the double sum of squares is added in another order: its float scale may round one ulp apart
                assertClose(expected, actual, 2, 0, "rms norm on " + isa + ", dim " + dim);
                kernels.rmsNorm(x, 3, weight, 1e-6f, x); // in place, as the models call it
                assertClose(actual, x, 0, 0, "rms norm in place on " + isa + ", dim " + dim);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("sets")
    void ropeMatchesJava(String isa) {
        NativeKernels kernels = on(isa);
        int[] positions = {0, 1, 17, 1000, 131071};
        for (int headDim : new int[]{6, 64, 128}) {
            float[] frequencies = new float[headDim / 2];
            for (int j = 0; j < frequencies.length; j++) {
                frequencies[j] = (float) Math.pow(500000, -2.0 * j / headDim);
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment x = random(arena, 5L * 4 * headDim, 3, headDim);
                MemorySegment expected = copy(arena, x);
                JavaElementwise.rope(expected, 1, 5, positions, 4, headDim, frequencies);
                kernels.rope(x, 1, 5, positions, 4, headDim, frequencies);
                for (long k = 0; k < 5L * 4 * headDim; k++) {
                    float e = expected.getAtIndex(FLOAT, k);
                    assertEquals(e, x.getAtIndex(FLOAT, k), 1e-6f * (1 + Math.abs(e)),
                            "rope on " + isa + ", head dim " + headDim + ", element " + k);
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("sets")
    void theBandwidthProbesReadSumsEveryFloat(String isa) {
        NativeKernels kernels = on(isa);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = random(arena, 70_001, 5, 11);
            double expected = 0;
            for (long k = 64; k < 70_001; k++) {
                expected += buffer.getAtIndex(FLOAT, k);
            }
            double sum = kernels.readAll(buffer, 64 * Float.BYTES, (70_001 - 64) * Float.BYTES);
            assertEquals(expected, sum, 1e-3, "read of " + isa);
            assertThrows(IllegalArgumentException.class, () -> kernels.readAll(buffer, 8, buffer.byteSize()));
            assertThrows(IllegalArgumentException.class, () -> kernels.readAll(buffer, 0, 6));
        }
    }

    @Test
    void shortBuffersAreRefusedBeforeTheNativeCall() {
        NativeKernels kernels = on(library.supported().getFirst());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment x = arena.allocate(16L * Float.BYTES);
            MemorySegment y = arena.allocate(8L * Float.BYTES);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> kernels.add(x, y, 16));
            assertTrue(e.getMessage().contains("addend: 16 floats asked of a buffer of 8"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> kernels.swiglu(y, x, 16));
            assertThrows(IllegalArgumentException.class, () -> kernels.scale(x, -1, 2f));
            assertThrows(IllegalArgumentException.class, () -> kernels.rmsNorm(x, 3, new float[8], 1e-5f, x));
            assertThrows(IllegalArgumentException.class,
                    () -> kernels.rope(x, 0, 2, new int[]{0, 1}, 2, 8, new float[4]));
            assertThrows(IllegalArgumentException.class,
                    () -> kernels.rope(x, 0, 3, new int[]{0, 1}, 1, 4, new float[2]));
        }
    }

    private static int len(MemorySegment x) {
        return (int) (x.byteSize() / Float.BYTES);
    }
}
