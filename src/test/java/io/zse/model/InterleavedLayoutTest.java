package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ConvertOptions;
import io.zse.format.InterleavedRows;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TinyStories-656K converted with {@code --layout interleaved} beside the same conversion in row-groups: the file
 * records the layout per tensor, holds the same bytes rearranged, and decodes the golden prompts greedily to the same
 * ids on every kernel family (the native kernels multiply it in place, the Java ones a row-groups copy).
 */
class InterleavedLayoutTest {
    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}/{1} on {2} kernels")
    @CsvSource({"Q8, 32, auto", "Q4, 32, auto", "Q4, 128, auto", "Q8, 32, scalar", "Q4, 32, vector", "Q4, 64, vector",
            "Q4, 128, scalar"})
    void convertedFileReadsBackAndDecodesLikeRowGroups(TensorType type, int groupSize, String kernels)
            throws IOException {
        ConvertOptions options = new ConvertOptions(type, groupSize, null, null, false);
        Path plain = TestModels.convert(TestModels.tinyStories(), options, dir.resolve("row-groups.zse"));
        Path tiled = TestModels.convert(TestModels.tinyStories(), options.withInterleave(true),
                dir.resolve("interleaved.zse"));
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        try (ZseFile a = ZseFile.open(plain); ZseFile b = ZseFile.open(tiled);
             CpuBackend backend = kernels.equals("auto") ? new CpuBackend(2) : TestKernels.backend(kernels, 2)) {
            assertSameBytesRearranged(a, b);
            LlamaModel rowGroups = LlamaModel.load(a, backend);
            LlamaModel interleaved = LlamaModel.load(b, backend);
            // The Java kernels multiply the very same bytes (a row-groups copy). The native ones sum in another order
            // (each product within about 1e-6 of the row-groups one, NativeKernelsTest), and a rounding difference
            // that moves an activation across an int8 rounding boundary changes its code: one such flip in this
            // model's 64-wide activations moved the logits by up to 0.14 (Q4/128, from step 10 of a prompt on, the KV
            // cache carrying it), while the steps without one stay within 1e-5. (Q4/64 on the native kernels flips
            // at a near tie whose side depends on the threads' split, so it is checked on the vector kernels here and
            // product by product in NativeKernelsTest.)
            boolean exact = !backend.kernels().name().equals("native");
            double tolerance = exact ? 1e-4 : 0.2;
            double maxDiff = 0;
            int compared = 0;
            for (JsonNode c : golden.get("cases")) {
                int[] prompt = LlamaModelGoldenTest.ints(c.get("prompt_ids"));
                List<float[]> want = new ArrayList<>();
                List<float[]> got = new ArrayList<>();
                int[] expected = LlamaModelGoldenTest.greedy(rowGroups, prompt, 24, want);
                int[] actual = LlamaModelGoldenTest.greedy(interleaved, prompt, 24, got);
                // Step by step until a tie closer than the logits' difference, after which the other file may
                // rightly pick the other id (while every logit is within d, a lead over 2d keeps the same greedy id).
                for (int s = 0; s < want.size(); s++) {
                    double stepDiff = 0;
                    for (int t = 0; t < want.get(s).length; t++) {
                        double diff = Math.abs(want.get(s)[t] - got.get(s)[t]);
                        stepDiff = Math.max(stepDiff, diff);
                        assertTrue(diff <= tolerance * Math.max(1, Math.abs(want.get(s)[t])),
                                "logit " + t + " step " + s + ": " + got.get(s)[t] + " vs " + want.get(s)[t]);
                    }
                    maxDiff = Math.max(maxDiff, stepDiff);
                    if (margin(want.get(s)) <= 2 * stepDiff + 1e-6) {
                        break;
                    }
                    assertEquals(expected[s], actual[s], "greedy id " + s + " for " + c.get("prompt").asText());
                    compared++;
                }
            }
            System.out.printf("TinyStories %s/%d interleaved vs row-groups on %s (%s): %d greedy steps equal, "
                    + "max |logit diff| = %.2e%n", type, groupSize, kernels, backend.kernels().name(), compared, maxDiff);
            assertTrue(compared >= 4 * golden.get("cases").size(), compared + " steps compared");
            if (backend.kernels().name().equals("scalar")) {
                assertEquals(0.0, maxDiff, "the scalar kernels multiply the very same bytes in the same order");
            }
        }
    }

    /** The largest logit minus the second largest. */
    private static double margin(float[] logits) {
        float first = Float.NEGATIVE_INFINITY;
        float second = Float.NEGATIVE_INFINITY;
        for (float v : logits) {
            if (v > first) {
                second = first;
                first = v;
            } else if (v > second) {
                second = v;
            }
        }
        return first - second;
    }

    /** Layout 1 exactly on the 2-D Q8 and Q4 tensors, whose bytes rearranged back are the row-groups file's. */
    private static void assertSameBytesRearranged(ZseFile rowGroups, ZseFile interleaved) {
        assertEquals(15, sameBytesRearranged(rowGroups, interleaved),
                "the embedding table and 7 matrices per layer of 2 layers");
    }

    /**
     * Asserts layout 1 exactly on the 2-D Q8 and Q4 tensors of {@code interleaved}, whose bytes rearranged back are
     * those of the same tensors in {@code rowGroups}, and every other tensor as it is there; returns how many are tiled.
     */
    static int sameBytesRearranged(ZseFile rowGroups, ZseFile interleaved) {
        assertEquals(rowGroups.tensors().size(), interleaved.tensors().size());
        int tiled = 0;
        for (TensorInfo info : interleaved.tensors()) {
            boolean expected = InterleavedRows.allows(info.type(), info.groupSize(), info.shape());
            assertEquals(expected ? ZseLayout.LAYOUT_INTERLEAVED_16 : ZseLayout.LAYOUT_ROW_GROUPS, info.layout(),
                    info.name());
            ZseTensor back = InterleavedRows.toRowGroups(interleaved.tensor(info.name()));
            ZseTensor want = rowGroups.tensor(info.name());
            assertArrayEquals(want.data().toArray(ValueLayout.JAVA_BYTE), back.data().toArray(ValueLayout.JAVA_BYTE),
                    info.name());
            assertArrayEquals(want.scales().toArray(ValueLayout.JAVA_BYTE),
                    back.scales().toArray(ValueLayout.JAVA_BYTE), info.name());
            tiled += expected ? 1 : 0;
        }
        return tiled;
    }
}
