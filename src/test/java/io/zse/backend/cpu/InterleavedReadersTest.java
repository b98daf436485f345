package io.zse.backend.cpu;

import io.zse.format.InterleavedRows;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every reader of layout interleaved-16 other than the native products: the rearrangement both ways, single rows
 * gathered by the native weight, and the Java kernels (which multiply a row-groups copy), each against the row-groups
 * tensor the interleaved one was made from.
 */
class InterleavedReadersTest {
    private static final CpuThreads THREADS = new CpuThreads(2);

    @AfterAll
    static void close() {
        THREADS.close();
    }

    private static byte[] bytes(MemorySegment segment) {
        return segment.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    @ParameterizedTest(name = "{0} [{1} x {2}]")
    @CsvSource({"Q8, 32, 16, 64", "Q8, 32, 37, 96", "Q8, 32, 5, 32", "Q4, 32, 48, 64", "Q4, 32, 37, 96",
            "Q4, 32, 5, 32", "Q4, 64, 37, 192", "Q4, 128, 48, 256"})
    void interleavingIsUndoneExactly(TensorType type, int groupSize, int rows, int cols) {
        ZseTensor rowGroups = MatmulTest.randomTensor(type, groupSize, rows, cols, rows * 31L + cols);
        ZseTensor interleaved = NativeKernelsTest.interleaved(rowGroups);
        if (rows >= InterleavedRows.ROWS) {
            assertNotEquals(java.util.Arrays.toString(bytes(rowGroups.data())), java.util.Arrays.toString(bytes(interleaved.data())),
                    "a whole tile is stored differently");
        }
        long tail = InterleavedRows.tiledRows(rows) * type.dataBytes(cols);
        assertArrayEquals(bytes(rowGroups.data().asSlice(tail)), bytes(interleaved.data().asSlice(tail)),
                "rows after the last tile stay in row-groups");
        ZseTensor back = InterleavedRows.toRowGroups(interleaved);
        assertEquals(ZseLayout.LAYOUT_ROW_GROUPS, back.info().layout());
        assertArrayEquals(bytes(rowGroups.data()), bytes(back.data()));
        assertArrayEquals(bytes(rowGroups.scales()), bytes(back.scales()));
        assertSame(rowGroups, InterleavedRows.toRowGroups(rowGroups), "row-groups is read in place");
    }

    @ParameterizedTest(name = "{0} {1} [{2} x {3}]")
    @CsvSource({"scalar, Q8, 32, 37, 96", "scalar, Q4, 32, 37, 96", "vector, Q8, 32, 37, 96", "vector, Q4, 32, 50, 64",
            "scalar, Q4, 128, 37, 256", "vector, Q4, 64, 50, 192"})
    void javaKernelsReadItAsTheRowGroupsItCameFrom(String kernels, TensorType type, int groupSize, int rows, int cols) {
        ZseTensor rowGroups = MatmulTest.randomTensor(type, groupSize, rows, cols, rows + 7L * cols);
        CpuKernels family = TestKernels.named(kernels);
        CpuWeight expected = family.weight(rowGroups);
        CpuWeight actual = family.weight(NativeKernelsTest.interleaved(rowGroups));
        for (int n : new int[]{1, 3}) {
            float[] x = activations(n * cols, n);
            float[] want = new float[n * rows];
            float[] got = new float[n * rows];
            expected.multiply(x, n, want, THREADS);
            actual.multiply(x, n, got, THREADS);
            assertArrayEquals(want, got, "n=" + n);
        }
        assertRowsEqual(expected, actual, rows, cols);
    }

    @ParameterizedTest(name = "{0} [{1} x {2}]")
    @CsvSource({"Q8, 32, 37, 96", "Q4, 32, 37, 96", "Q4, 32, 16, 32", "Q4, 64, 37, 192", "Q4, 128, 20, 256"})
    void nativeWeightGathersSingleRows(TensorType type, int groupSize, int rows, int cols) {
        NativeCpuLibrary library = NativeLibraryProbe.result().library().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(library != null, "no libzse_cpu here");
        ZseTensor rowGroups = MatmulTest.randomTensor(type, groupSize, rows, cols, rows + 3L * cols);
        CpuWeight expected = ScalarKernels.INSTANCE.weight(rowGroups);
        CpuWeight actual = new NativeKernels(library, ScalarKernels.INSTANCE).weight(
                NativeKernelsTest.interleaved(rowGroups));
        assertRowsEqual(expected, actual, rows, cols);
        float[] x = activations(cols, 1);
        for (int r = 0; r < rows; r++) {
            assertEquals(expected.dot(r, x, 0), actual.dot(r, x, 0), 1e-5f * cols, "dot of row " + r);
        }
    }

    @Test
    void onlyQ8AndQ4AreInterleaved() {
        assertTrue(InterleavedRows.allows(TensorType.Q8, 32, new long[]{16, 64}));
        assertTrue(InterleavedRows.allows(TensorType.Q4, 32, new long[]{16, 64}));
        assertTrue(InterleavedRows.allows(TensorType.Q4, 64, new long[]{16, 64}));
        assertTrue(InterleavedRows.allows(TensorType.Q4, 128, new long[]{16, 128}));
        assertTrue(!InterleavedRows.allows(TensorType.NF4, 64, new long[]{16, 64}));
        assertTrue(!InterleavedRows.allows(TensorType.Q8, 32, new long[]{64}));
        NativeCpuLibrary library = NativeLibraryProbe.result().library().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(library != null, "no libzse_cpu here");
        ZseTensor nf4 = MatmulTest.randomTensor(TensorType.NF4, 64, 16, 64, 1);
        ZseTensor mislabelled = new ZseTensor(nf4.info().withLayout(ZseLayout.LAYOUT_INTERLEAVED_16), nf4.data(),
                nf4.scales());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new NativeKernels(library, ScalarKernels.INSTANCE).weight(mislabelled));
        assertTrue(e.getMessage().contains("is not stored in layout interleaved-16"), e.getMessage());
    }

    private static void assertRowsEqual(CpuWeight expected, CpuWeight actual, int rows, int cols) {
        float[] want = new float[cols];
        float[] got = new float[cols];
        for (int r = 0; r < rows; r++) {
            expected.decodeRow(r, want, 0);
            actual.decodeRow(r, got, 0);
            assertArrayEquals(want, got, "row " + r);
        }
    }

    private static float[] activations(int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] x = new float[count];
        for (int k = 0; k < count; k++) {
            x[k] = (float) random.nextDouble(-1, 1);
        }
        return x;
    }
}
