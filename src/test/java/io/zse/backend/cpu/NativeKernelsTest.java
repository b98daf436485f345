package io.zse.backend.cpu;

import io.zse.backend.BackendUnavailableException;
import io.zse.format.InterleavedRows;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every kernel set of libzse_cpu this CPU runs (AVX-512, AVX2 and the portable C on an AVX-512 machine), for every
 * storage type and shapes with tile edges, against products computed here in double. Q8, Q4, Q5 and the K-quants
 * multiply int8 activations: they must match the product with the activations as quantized exactly, and stay within
 * the quantization's own error bound of the float product. Q8 and Q4 (each group size) also run in layout interleaved-16, whose
 * products are checked against the same sums computed from the row-groups bytes it was made from.
 */
class NativeKernelsTest {
    private static final String[] CASES = {
            "F32, 0, 37, 45, 1", "F32, 0, 37, 45, 5", "F32, 0, 3, 7, 2",
            "F16, 0, 37, 45, 1", "F16, 0, 37, 45, 5", "BF16, 0, 37, 45, 1", "BF16, 0, 37, 48, 9",
            "Q8, 32, 37, 96, 1", "Q8, 32, 37, 96, 5", "Q8, 32, 8, 64, 4",
            "Q4, 32, 37, 96, 1", "Q4, 32, 37, 96, 5", "Q4, 64, 19, 192, 3", "Q4, 128, 21, 256, 1", "Q4, 128, 21, 256, 4",
            "NF4, 64, 37, 192, 1", "NF4, 64, 37, 192, 5", "NF4, 64, 4, 64, 8",
            "Q5, 32, 37, 96, 1", "Q5, 32, 37, 96, 5", "Q5, 32, 8, 64, 8",
            "Q4_K, 256, 37, 512, 1", "Q4_K, 256, 37, 512, 5", "Q4_K, 256, 8, 256, 8",
            "Q5_K, 256, 37, 512, 1", "Q5_K, 256, 19, 768, 5", "Q6_K, 256, 37, 512, 1", "Q6_K, 256, 21, 256, 5",
            "Q6_K, 256, 8, 256, 8",
            // layout interleaved-16: whole tiles only, tiles and a tail of rows, a tail only; decode and prefill edges
            "Q8 x16, 32, 32, 96, 1", "Q8 x16, 32, 37, 96, 1", "Q8 x16, 32, 37, 64, 5", "Q8 x16, 32, 50, 256, 4",
            "Q8 x16, 32, 5, 32, 2", "Q8 x16, 32, 48, 64, 9",
            "Q4 x16, 32, 32, 96, 1", "Q4 x16, 32, 37, 96, 1", "Q4 x16, 32, 37, 64, 5", "Q4 x16, 32, 50, 256, 4",
            "Q4 x16, 32, 5, 32, 2", "Q4 x16, 32, 48, 64, 9",
            "Q4 x16, 64, 37, 192, 1", "Q4 x16, 64, 48, 320, 5", "Q4 x16, 64, 5, 64, 2",
            "Q4 x16, 128, 37, 256, 1", "Q4 x16, 128, 50, 384, 4", "Q4 x16, 128, 16, 128, 9",
    };

    private static final CpuThreads THREADS = new CpuThreads(2);
    private static NativeCpuLibrary library;

    @BeforeAll
    static void load() {
        Optional<NativeCpuLibrary> loaded = NativeLibraryProbe.result().library();
        // Where a C compiler exists the build made the library: its absence is then a failure, not a skip.
        assumeTrue(loaded.isPresent() || !compilerOnPath(),
                "no C compiler here, so no libzse_cpu: " + NativeLibraryProbe.result().problem());
        library = loaded.orElseThrow(() -> new AssertionError(NativeLibraryProbe.result().problem()));
    }

    private static boolean compilerOnPath() {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, "cc")) || Files.isExecutable(Path.of(dir, "gcc")));
    }

    @AfterEach
    void best() {
        if (library != null) {
            library.use(library.supported().getFirst());
        }
    }

    @AfterAll
    static void close() {
        THREADS.close();
    }

    static Stream<Arguments> cases() {
        Optional<NativeCpuLibrary> loaded = NativeLibraryProbe.result().library();
        List<String> sets = loaded.map(NativeCpuLibrary::supported).orElse(List.of("generic"));
        return sets.stream().flatMap(isa -> Arrays.stream(CASES).map(c -> {
            String[] f = c.split(", ");
            String[] type = f[0].split(" ");
            return Arguments.of(isa, TensorType.valueOf(type[0]), type.length > 1 ? "interleaved-16" : "row-groups",
                    Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4]));
        }));
    }

    @ParameterizedTest(name = "{0} {1} {2} g={3} [{4} x {5}] n={6}")
    @MethodSource("cases")
    void matchesTheProductInDouble(String isa, TensorType type, String layout, int groupSize, int rows, int cols,
                                   int n) {
        library.use(isa);
        ZseTensor tensor = MatmulTest.randomTensor(type, groupSize, rows, cols, 7L * rows + cols + n);
        ZseTensor stored = layout.equals("row-groups") ? tensor : interleaved(tensor);
        SplittableRandom random = new SplittableRandom(n + 100L * cols);
        float[] x = new float[n * cols];
        for (int k = 0; k < x.length; k++) {
            x[k] = (float) random.nextDouble(-2, 2);
        }
        float[] out = new float[n * rows];
        new NativeKernels(library, ScalarKernels.INSTANCE).weight(stored).multiply(x, n, out, THREADS);

        boolean int8 = type == TensorType.Q8 || type == TensorType.Q4 || type == TensorType.Q5 || type.isKQuant();
        float[] used = int8 ? TestKernels.int8Activations(x) : x;
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            TensorDecoder.decode(type, groupSize, tensor.data(), tensor.scales(), (long) r * cols, cols, row, 0);
            for (int i = 0; i < n; i++) {
                double expected = 0;
                double exact = 0;
                double magnitude = 0;
                double quantizationBound = 0;
                for (int k = 0; k < cols; k++) {
                    expected += (double) row[k] * used[i * cols + k];
                    exact += (double) row[k] * x[i * cols + k];
                    magnitude += Math.abs((double) row[k] * x[i * cols + k]);
                    quantizationBound += Math.abs(row[k]) * Math.abs(used[i * cols + k] - x[i * cols + k]);
                }
                String where = isa + " out[" + i + ", " + r + "]";
                assertEquals(expected, out[i * rows + r], 2e-6 * Math.max(1e-3, magnitude), where);
                assertTrue(Math.abs(exact - out[i * rows + r]) <= quantizationBound + 2e-6 * Math.max(1e-3, magnitude),
                        where + " is further from the float product than int8 activations allow");
            }
        }
    }

    /** A copy of a row-groups tensor in layout interleaved-16. */
    static ZseTensor interleaved(ZseTensor tensor) {
        MemorySegment data = Arena.ofAuto().allocate(tensor.data().byteSize()).copyFrom(tensor.data());
        MemorySegment scales = Arena.ofAuto().allocate(tensor.scales().byteSize()).copyFrom(tensor.scales());
        long[] shape = tensor.shape();
        InterleavedRows.interleave(tensor.type(), tensor.groupSize(), shape[0], shape[1], data, scales);
        return new ZseTensor(tensor.info().withLayout(ZseLayout.LAYOUT_INTERLEAVED_16), data, scales);
    }

    /** The activations as the kernels see them: per block of 32, round(x * 127 / max|x|) * max|x| / 127. */
    private static float[] quantizedAsFloats(float[] x) {
        float[] q = new float[x.length];
        for (int b = 0; b < x.length; b += 32) {
            float amax = 0;
            for (int k = b; k < b + 32; k++) {
                amax = Math.max(amax, Math.abs(x[k]));
            }
            float scale = amax / 127f;
            float inverse = amax == 0 ? 0 : 127f / amax;
            for (int k = b; k < b + 32; k++) {
                q[k] = (float) Math.rint(x[k] * inverse) * scale;
            }
        }
        return q;
    }

    @Test
    void refusesAWeightWhoseBytesAreShorterThanItsShape() {
        ZseTensor whole = MatmulTest.randomTensor(TensorType.Q4, 32, 8, 64, 1);
        MemorySegment cut = whole.data().asSlice(0, whole.data().byteSize() - 16);
        ZseTensor shortData = new ZseTensor(whole.info(), cut, whole.scales());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new NativeKernels(library, ScalarKernels.INSTANCE).weight(shortData));
        assertTrue(e.getMessage().contains("data hold 240 bytes, it needs 256"), e.getMessage());
    }

    @Test
    void refusesActivationArraysTooShortForTheProduct() {
        CpuWeight w = new NativeKernels(library, ScalarKernels.INSTANCE)
                .weight(MatmulTest.randomTensor(TensorType.Q8, 32, 8, 64, 1));
        assertThrows(IllegalArgumentException.class, () -> w.multiply(new float[64], 2, new float[16], THREADS));
        assertThrows(IllegalArgumentException.class, () -> w.multiply(new float[128], 2, new float[15], THREADS));
    }

    /**
     * The converter's quantizers divide by the group and walk the values: a group the type does not take, or values,
     * codes or scales shorter than the count, are refused before the C code runs (a group of 0 once ended the JVM).
     */
    @Test
    void convertRefusesGroupsAndBuffersThatDoNotFitTheCount() {
        MemorySegment src = MemorySegment.ofArray(new float[64]);
        MemorySegment data = MemorySegment.ofArray(new byte[32]);
        MemorySegment scales = MemorySegment.ofArray(new byte[8]);
        float[] table = {1f};
        assertThrows(IllegalArgumentException.class,
                () -> library.convert(TensorType.Q4, 0, src, 64, data, scales, table, null, 0f));
        assertThrows(IllegalArgumentException.class,
                () -> library.convert(TensorType.Q4, 32, src, 128, data, scales, table, null, 0f));
        assertThrows(IllegalArgumentException.class,
                () -> library.convert(TensorType.Q8, 32, src, 64, data, scales, table, null, 0f));
        assertThrows(IllegalArgumentException.class,
                () -> library.convert(TensorType.Q4, 32, src, 64, data, scales, new float[0], null, 0f));
    }

    @Test
    void autoTakesTheLibraryAndSaysSoInOneLine() {
        List<String> log = new ArrayList<>();
        CpuKernels kernels = CpuKernelChoice.AUTO.kernels(NativeLibraryProbe.result(), Optional.empty(), log::add);
        assertInstanceOf(NativeKernels.class, kernels);
        assertEquals(List.of("zse: CPU kernels: native " + library.isa() + " (" + library.path() + ")"), log);
    }

    @Test
    void anUnknownKernelSetIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> library.use("sse2"));
        assertTrue(e.getMessage().contains("'sse2' does not run here"), e.getMessage());
    }

    @Test
    void withoutTheLibraryAutoFallsBackAndNativeIsRefused() {
        NativeLibraryProbe missing = new NativeLibraryProbe(Optional.empty(), "libzse_cpu.so not found in [x]");
        List<String> log = new ArrayList<>();
        assertEquals(VectorKernels.INSTANCE, CpuKernelChoice.AUTO.kernels(missing, Optional.empty(), log::add));
        assertEquals(ScalarKernels.INSTANCE, CpuKernelChoice.AUTO.kernels(missing, Optional.of("no module"), log::add));
        assertEquals(List.of("zse: CPU kernels: vector (native kernels unusable: libzse_cpu.so not found in [x])",
                "zse: CPU kernels: scalar (native kernels unusable: libzse_cpu.so not found in [x]; vector kernels "
                        + "unusable: no module)"), log);
        BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
                () -> CpuKernelChoice.NATIVE.kernels(missing, Optional.empty(), log::add));
        assertTrue(e.getMessage().startsWith("zse.cpu.kernels=native unavailable: libzse_cpu.so not found"));
    }
}
