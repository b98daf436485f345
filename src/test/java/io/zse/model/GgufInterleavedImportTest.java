package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ModelConverter;
import io.zse.convert.gguf.GgufConverter;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * llama.cpp's Q8_0 and Q4_0 GGUFs of TinyStories imported in layout interleaved-16 beside the same import in
 * row-groups: the same bytes, only reordered, and identical logits on the scalar Java kernels (which multiply a
 * row-groups copy made at load, in a fixed order). The native kernels read the tiles in place and sum in another order; their products are checked
 * against the row-groups ones in NativeKernelsTest and check/kernel_check.c, and a whole model's logits on them in
 * InterleavedLayoutTest (where a flipped int8 activation code reaches a few 1e-2 of a logit).
 */
class GgufInterleavedImportTest {
    @TempDir
    static Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource({"tinystories-656k-q8_0", "tinystories-656k-q4_0"})
    void interleavedImportIsTheRowGroupsImportReordered(String name) throws IOException {
        Path gguf = GgufFixtures.gguf(name, dir);
        Path plain = dir.resolve(name + "-row-groups.zse");
        Path tiled = dir.resolve(name + "-interleaved.zse");
        ModelConverter.Result rowGroupsResult = GgufConverter.convert(gguf, plain, true, false,
                ModelConverter.Progress.NONE);
        ModelConverter.Result interleavedResult = GgufConverter.convert(gguf, tiled, true, true,
                ModelConverter.Progress.NONE);
        assertEquals(rowGroupsResult.notes(), interleavedResult.notes(), "the same carry-over, tensor by tensor");
        JsonNode golden = GgufImportGoldenTest.json("/gguf/" + name + ".json");
        try (ZseFile a = ZseFile.open(plain); ZseFile b = ZseFile.open(tiled);
             CpuBackend backend = TestKernels.backend("scalar", 2)) {
            int tiledTensors = InterleavedLayoutTest.sameBytesRearranged(a, b);
            assertTrue(tiledTensors >= 14, tiledTensors + " tensors interleaved: 7 matrices per layer of 2 layers");
            LlamaModel rowGroups = LlamaModel.load(a, backend);
            LlamaModel interleaved = LlamaModel.load(b, backend);
            int steps = 0;
            for (JsonNode c : golden.get("cases")) {
                int[] prompt = LlamaModelGoldenTest.ints(c.get("prompt_ids"));
                List<float[]> want = new ArrayList<>();
                List<float[]> got = new ArrayList<>();
                int[] expected = LlamaModelGoldenTest.greedy(rowGroups, prompt, 8, want);
                int[] actual = LlamaModelGoldenTest.greedy(interleaved, prompt, 8, got);
                assertArrayEquals(expected, actual, c.get("prompt").asText());
                for (int s = 0; s < want.size(); s++) {
                    assertArrayEquals(want.get(s), got.get(s), "step " + s + " of " + c.get("prompt").asText());
                }
                steps += want.size();
            }
            assertEquals(8 * golden.get("cases").size(), steps);
        }
    }
}
