package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ConvertOptions;
import io.zse.convert.ModelConverter;
import io.zse.convert.gguf.GgmlBlockDecoder;
import io.zse.convert.gguf.GgmlType;
import io.zse.convert.gguf.GgufConverter;
import io.zse.convert.gguf.GgufFile;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseFile;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * BitNet b1.58 GGUF files (architecture bitnet-b1.58, projections TQ1_0 or TQ2_0; tools/reference/bitnet_gguf_fixtures.py)
 * against the packed safetensors checkpoint of the same model ({@link FormulaCheckpoint#writeBitNetPacked}, whose
 * import {@link BitNetGoldenTest} checks against transformers' BitLinear). The projections must become TERNARY with the
 * checkpoint's codes, every other tensor must be the same bytes, and the greedy ids must be the checkpoint's.
 */
class BitNetGgufImportTest {
    @TempDir
    static Path dir;
    static final CpuBackend BACKEND = TestKernels.backend("native", 2);

    @AfterAll
    static void close() {
        BACKEND.close();
    }

    /** TQ1_0 written from t with the exact F32 scale in llama.cpp's blk.N.*.scale tensors: the same file, byte for byte. */
    @Test
    void tq1WithScaleTensorsIsThePackedCheckpointExactly() throws IOException {
        Imported in = importBoth("tiny-bitnet-tq1_0");
        assertEquals(List.of("F32 -> F32 (exact): 10 tensors", "TQ1_0 -> TERNARY (exact): 14 tensors"), in.notes);
        try (ZseFile gguf = ZseFile.open(in.gguf); ZseFile hf = ZseFile.open(in.safetensors)) {
            for (TensorInfo t : hf.tensors()) {
                TensorInfo mine = gguf.tensor(t.name()).info();
                assertEquals(t.type(), mine.type(), t.name());
                assertEquals(t.dataCrc(), mine.dataCrc(), t.name() + " data");
                assertEquals(t.scalesCrc(), mine.scalesCrc(), t.name() + " scales");
            }
            assertSameGreedyIds(hf, gguf);
        }
        assertDecodesAsGgml("tiny-bitnet-tq1_0", in.gguf);
    }

    /**
     * TQ2_0 as llama-quantize makes it from ternary floats t · s: every block's d is float16(s). The codes are the
     * checkpoint's, the one scale is that d, and every projection decodes to ggml's values bit for bit. (The greedy ids
     * are not the checkpoint's: s rounded to float16, 2^-11 relative, moves this random model's logits enough to change
     * the 31st of 32 ids; the file itself holds those values, and the TQ1_0 test shows the lossless form.)
     */
    @Test
    void tq2IsTheCheckpointsCodesWithItsHalfPrecisionScale() throws IOException {
        Imported in = importBoth("tiny-bitnet-tq2_0");
        assertEquals(List.of("F32 -> F32 (exact): 10 tensors", "TQ2_0 -> TERNARY (exact): 14 tensors"), in.notes);
        try (ZseFile gguf = ZseFile.open(in.gguf); ZseFile hf = ZseFile.open(in.safetensors)) {
            int ternary = 0;
            for (TensorInfo t : hf.tensors()) {
                TensorInfo mine = gguf.tensor(t.name()).info();
                assertEquals(t.type(), mine.type(), t.name());
                assertEquals(t.dataCrc(), mine.dataCrc(), t.name() + " data");
                if (t.type() == TensorType.TERNARY) {
                    float s = TernaryBlocks.scale(hf.tensor(t.name()).scales());
                    assertEquals(Float.float16ToFloat(Float.floatToFloat16(s)),
                            TernaryBlocks.scale(gguf.tensor(t.name()).scales()), t.name());
                    ternary++;
                }
            }
            assertEquals(14, ternary);
        }
        assertDecodesAsGgml("tiny-bitnet-tq2_0", in.gguf);
    }

    /**
     * Every TERNARY element of {@code zse} equals ggml's dequantization of the GGUF tensor it came from, times its
     * .scale tensor where the file has one.
     */
    private static void assertDecodesAsGgml(String name, Path zse) throws IOException {
        try (ZseFile file = ZseFile.open(zse); GgufFile g = GgufFile.open(GgufFixtures.gguf(name, dir))) {
            for (GgufFile.GgufTensor source : g.tensors()) {
                if (source.type() != GgmlType.TQ1_0 && source.type() != GgmlType.TQ2_0) {
                    continue;
                }
                String[] parts = source.name().split("\\.");
                String hf = "model.layers." + parts[1] + "." + switch (parts[2]) {
                    case "attn_q" -> "self_attn.q_proj";
                    case "attn_k" -> "self_attn.k_proj";
                    case "attn_v" -> "self_attn.v_proj";
                    case "attn_output" -> "self_attn.o_proj";
                    case "ffn_gate" -> "mlp.gate_proj";
                    case "ffn_up" -> "mlp.up_proj";
                    default -> "mlp.down_proj";
                } + ".weight";
                var t = file.tensor(hf);
                int count = (int) t.info().elementCount();
                float[] ours = new float[count];
                float[] ggml = new float[count];
                TensorDecoder.decode(t.info().type(), t.info().groupSize(), t.data(), t.scales(), 0, count, ours, 0);
                GgmlBlockDecoder.decode(source.type(), g.bytes(source), 0, count, ggml, 0);
                String scaleName = source.name().replace(".weight", ".scale");
                float scale = g.tensors().stream().filter(x -> x.name().equals(scaleName)).findFirst()
                        .map(x -> g.bytes(x).get(io.zse.format.LittleEndian.FLOAT, 0)).orElse(1f);
                for (int i = 0; i < count; i++) {
                    assertEquals(ggml[i] * scale, ours[i], hf + " element " + i);
                }
            }
        }
    }

    private record Imported(Path gguf, Path safetensors, List<String> notes) {
    }

    private static Imported importBoth(String name) throws IOException {
        JsonNode fixture = GgufImportGoldenTest.json("/gguf/" + name + ".json");
        Path gguf = dir.resolve(name + ".zse");
        ModelConverter.Result result = GgufConverter.convert(GgufFixtures.gguf(name, dir), gguf, true,
                ModelConverter.Progress.NONE);
        byte[] tokenizer = Files.readAllBytes(Path.of("src/test/resources/models/tinystories-656k/tokenizer.json"));
        Path hf = FormulaCheckpoint.writeBitNetPacked(fixture.get("config"),
                fixture.get("weights").get("seed").asLong(), tokenizer, dir.resolve(name + "-hf"));
        Path safetensors = TestModels.convert(hf, ConvertOptions.of(TensorType.F32), dir.resolve(name + "-hf.zse"));
        try (ZseFile a = ZseFile.open(gguf); ZseFile b = ZseFile.open(safetensors)) {
            assertEquals(ModelConfig.fromJson(b.configJson()), ModelConfig.fromJson(a.configJson()));
            assertEquals(b.tensors().size(), a.tensors().size());
        }
        return new Imported(gguf, safetensors, result.notes());
    }

    private static void assertSameGreedyIds(ZseFile safetensors, ZseFile gguf) throws IOException {
        String text = "Once upon a time, a little";
        int[] prompt = TokenizerSource.fromZse(safetensors).encode(text, true);
        assertArrayEquals(prompt, TokenizerSource.fromZse(gguf).encode(text, true));
        int[] expected = LlamaModelGoldenTest.greedy(LlamaModel.load(safetensors, BACKEND), prompt, 32, new ArrayList<>());
        int[] actual = LlamaModelGoldenTest.greedy(LlamaModel.load(gguf, BACKEND), prompt, 32, new ArrayList<>());
        assertArrayEquals(expected, actual, "greedy ids");
    }
}
