package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.NativeKernels;
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

    @ParameterizedTest(name = "{0} on {1} kernels")
    @CsvSource({"Q8, auto", "Q4, auto", "Q8, scalar", "Q4, vector"})
    void convertedFileReadsBackAndDecodesLikeRowGroups(TensorType type, String kernels) throws IOException {
        ConvertOptions options = ConvertOptions.of(type);
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
            double maxDiff = 0;
            for (JsonNode c : golden.get("cases")) {
                int[] prompt = LlamaModelGoldenTest.ints(c.get("prompt_ids"));
                List<float[]> want = new ArrayList<>();
                List<float[]> got = new ArrayList<>();
                int[] expected = LlamaModelGoldenTest.greedy(rowGroups, prompt, 24, want);
                assertArrayEquals(expected, LlamaModelGoldenTest.greedy(interleaved, prompt, 24, got),
                        "greedy ids for " + c.get("prompt").asText());
                for (int s = 0; s < want.size(); s++) {
                    for (int t = 0; t < want.get(s).length; t++) {
                        double diff = Math.abs(want.get(s)[t] - got.get(s)[t]);
                        maxDiff = Math.max(maxDiff, diff);
                        // The same sums in another order on the native kernels; identical bytes on the Java ones.
                        assertTrue(diff <= 1e-4 * Math.max(1, Math.abs(want.get(s)[t])), "logit " + t + " step " + s);
                    }
                }
            }
            System.out.printf("TinyStories %s interleaved vs row-groups on %s (%s): max |logit diff| = %.2e%n", type,
                    kernels, backend.kernels().name(), maxDiff);
            if (!(backend.kernels() instanceof NativeKernels)) {
                assertEquals(0.0, maxDiff, "the Java kernels multiply the very same bytes");
            }
        }
    }

    /** Layout 1 exactly on the 2-D Q8 and Q4/32 tensors, whose bytes rearranged back are the row-groups file's. */
    private static void assertSameBytesRearranged(ZseFile rowGroups, ZseFile interleaved) {
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
        assertEquals(15, tiled, "the embedding table and 7 matrices per layer of 2 layers");
    }
}
