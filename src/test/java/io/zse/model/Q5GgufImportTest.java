package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ModelConverter;
import io.zse.convert.gguf.GgufConverter;
import io.zse.convert.gguf.GgmlBlockDecoder;
import io.zse.convert.gguf.GgmlType;
import io.zse.convert.gguf.GgufFile;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TinyStories-656K quantized by llama-quantize to Q5_0 and Q5_1 (tools/reference/q5_gguf_fixtures.py), against
 * transformers loading the same GGUF. Q5_0 is carried exactly as Q8 (codes q - 16, the same d): every value equals
 * ggml's dequantization and the logits match the dequantizing reference as closely as the exact types do. Q5_1 (an
 * offset per block, which no .zse type holds with 5-bit codes) is re-quantized to Q8, with the added error reported.
 */
class Q5GgufImportTest {
    @org.junit.jupiter.api.io.TempDir
    static Path dir;
    static final CpuBackend BACKEND = TestKernels.backend("vector", 2); // float activations, as the reference

    @AfterAll
    static void close() {
        BACKEND.close();
    }

    static ModelConverter.Result convert(String name, Path out) throws IOException {
        return GgufConverter.convert(GgufFixtures.gguf(name, dir), out, true, ModelConverter.Progress.NONE);
    }

    @Test
    void q5ZeroIsCarriedExactlyAsQ8() throws IOException {
        Path out = dir.resolve("q5_0.zse");
        ModelConverter.Result result = convert("tinystories-656k-q5_0", out);
        assertTrue(result.notes().contains("Q5_0 -> Q8 (exact): 14 tensors"), result.notes().toString());
        try (ZseFile file = ZseFile.open(out);
             GgufFile gguf = GgufFile.open(GgufFixtures.gguf("tinystories-656k-q5_0", dir))) {
            int compared = 0;
            for (GgufFile.GgufTensor source : gguf.tensors()) {
                // q and k rows are permuted by llama.cpp's converter (GgmlBlockDecoderTest checks the row order)
                if (source.type() != GgmlType.Q5_0 || source.name().contains("attn_q") || source.name().contains("attn_k")) {
                    continue;
                }
                ZseTensor t = file.tensor(hfName(source.name()));
                assertEquals(TensorType.Q8, t.info().type(), t.name());
                int count = (int) t.info().elementCount();
                float[] ours = new float[count];
                float[] ggml = new float[count];
                TensorDecoder.decode(t.info().type(), t.info().groupSize(), t.data(), t.scales(), 0, count, ours, 0);
                GgmlBlockDecoder.decode(source.type(), gguf.bytes(source), 0, count, ggml, 0);
                for (int i = 0; i < count; i++) {
                    // equal values; ggml's (q - 16) d gives -0 for q = 16 and a negative d where c d gives +0 as well
                    assertTrue(ggml[i] == ours[i], t.name() + " element " + i + ": " + ours[i] + " vs " + ggml[i]);
                }
                compared++;
            }
            assertEquals(10, compared);
            assertMatchesTransformers(file, "tinystories-656k-q5_0", 1e-4);
        }
    }

    @Test
    void q5OneIsRequantizedWithItsErrorReported() throws IOException {
        Path out = dir.resolve("q5_1.zse");
        ModelConverter.Result result = convert("tinystories-656k-q5_1", out);
        assertTrue(result.notes().stream().anyMatch(n -> n.startsWith("Q5_1 -> Q8: 14 tensors, added error max")),
                result.notes().toString());
        try (ZseFile file = ZseFile.open(out)) {
            assertMatchesTransformers(file, "tinystories-656k-q5_1", 2e-2);
        }
    }

    private static void assertMatchesTransformers(ZseFile file, String name, double tolerance) throws IOException {
        LlamaModel model = LlamaModel.load(file, BACKEND);
        double maxDiff = 0;
        for (JsonNode c : GgufImportGoldenTest.json("/gguf/" + name + ".json").get("cases")) {
            maxDiff = Math.max(maxDiff, GgufImportGoldenTest.teacherForced(model, GreedyGolden.of(c), tolerance));
        }
        System.out.printf("%s: max |logit - transformers(gguf)| = %.2e%n", name, maxDiff);
    }

    /** blk.N.{attn_v, attn_output, ffn_gate, ffn_up, ffn_down}.weight as the .zse (Hugging Face) name. */
    private static String hfName(String gguf) {
        String[] p = gguf.split("\\.");
        String part = switch (p[2]) {
            case "attn_v" -> "self_attn.v_proj";
            case "attn_output" -> "self_attn.o_proj";
            case "ffn_gate" -> "mlp.gate_proj";
            case "ffn_up" -> "mlp.up_proj";
            case "ffn_down" -> "mlp.down_proj";
            default -> throw new IllegalArgumentException(gguf);
        };
        return "model.layers." + p[1] + "." + part + ".weight";
    }
}
