package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.Matmul;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TinyStories-656K quantized by llama-quantize to Q5_0 and Q5_1 (tools/reference/q5_gguf_fixtures.py), against
 * transformers loading the same GGUF. Both are carried exactly as Q5 (Q5_0 with m = -16 d): every value equals ggml's
 * dequantization, the logits match the dequantizing reference as closely as the other exact types do (Java kernels,
 * float activations), and the native kernels (int8 activations, as for Q4) give the reference's greedy ids.
 */
class Q5GgufImportTest {
    @org.junit.jupiter.api.io.TempDir
    static Path dir;
    static final CpuBackend VECTOR = TestKernels.backend("vector", 2); // float activations, as the reference
    static final CpuBackend NATIVE = TestKernels.backend("native", 2);

    @AfterAll
    static void close() {
        VECTOR.close();
        NATIVE.close();
    }

    static ModelConverter.Result convert(String name, Path out) throws IOException {
        return GgufConverter.convert(GgufFixtures.gguf(name, dir), out, true, ModelConverter.Progress.NONE);
    }

    @ParameterizedTest
    @CsvSource({"tinystories-656k-q5_0, Q5_0", "tinystories-656k-q5_1, Q5_1"})
    void carriedExactlyAsQ5(String name, GgmlType type) throws IOException {
        Path out = dir.resolve(name + ".zse");
        ModelConverter.Result result = convert(name, out);
        assertTrue(result.notes().contains(type + " -> Q5 (exact): 14 tensors"), result.notes().toString());
        try (ZseFile file = ZseFile.open(out); GgufFile gguf = GgufFile.open(GgufFixtures.gguf(name, dir))) {
            int compared = 0;
            for (GgufFile.GgufTensor source : gguf.tensors()) {
                // q and k rows are permuted by llama.cpp's converter (GgmlBlockDecoderTest checks the row order)
                if (source.type() != type || source.name().contains("attn_q") || source.name().contains("attn_k")) {
                    continue;
                }
                ZseTensor t = file.tensor(hfName(source.name()));
                assertEquals(TensorType.Q5, t.info().type(), t.name());
                int count = (int) t.info().elementCount();
                float[] ours = new float[count];
                float[] ggml = new float[count];
                TensorDecoder.decode(t.info().type(), t.info().groupSize(), t.data(), t.scales(), 0, count, ours, 0);
                GgmlBlockDecoder.decode(source.type(), gguf.bytes(source), 0, count, ggml, 0);
                float[] java = new float[count];
                Matmul kernel = Matmul.of(t);
                int cols = (int) t.info().shape()[1];
                for (int r = 0; r < count / cols; r++) {
                    kernel.decodeRow(r, java, r * cols);
                }
                for (int i = 0; i < count; i++) {
                    // equal values (ggml's (q - 16) d may be -0 where q d + m is +0)
                    assertTrue(ggml[i] == ours[i] && ours[i] == java[i],
                            t.name() + " element " + i + ": " + ours[i] + ", " + java[i] + " vs " + ggml[i]);
                }
                compared++;
            }
            assertEquals(10, compared);
            assertMatchesTransformers(LlamaModel.load(file, VECTOR), name, 1e-4);
            // int8 activations move logits by ~1e-2 (as for Q4); greedy ids must still agree where the margin allows
            assertMatchesTransformers(LlamaModel.load(file, NATIVE), name, 3e-2);
        }
    }

    private static void assertMatchesTransformers(LlamaModel model, String name, double tolerance) throws IOException {
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
