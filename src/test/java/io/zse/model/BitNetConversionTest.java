package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.BitNetProjections;
import io.zse.convert.ConvertOptions;
import io.zse.convert.ModelConverter;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SyntheticCheckpointWriter;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * BitNet checkpoints through {@code zse convert} as a user runs it: packed codes carry over into TERNARY unchanged,
 * every option the engine does not run is refused by name, and {@code zse synth}'s writer makes a BitNet checkpoint
 * that converts and generates. Shapes are small (hidden 128, the TinyStories tokenizer's 2051 ids).
 */
class BitNetConversionTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A small BitNet config.json in the packed (bitlinear, offline) form. */
    private static ObjectNode config() throws IOException {
        return (ObjectNode) JSON.readTree("""
                {"architectures": ["BitNetForCausalLM"], "model_type": "bitnet", "hidden_act": "relu2",
                 "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 2051, "max_position_embeddings": 256,
                 "rope_theta": 500000.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": true, "bos_token_id": 1,
                 "eos_token_id": 2, "torch_dtype": "float32",
                 "quantization_config": {"quant_method": "bitnet", "linear_class": "bitlinear",
                                         "quantization_mode": "offline"}}""");
    }

    private static byte[] tokenizer() throws IOException {
        return Files.readAllBytes(TestModels.tinyStories().resolve("tokenizer.json"));
    }

    private Path convert(Path hf) throws IOException {
        Path out = dir.resolve(hf.getFileName() + ".zse");
        ModelConverter.convert(hf, out, ConvertOptions.of(TensorType.F32), ModelConverter.Progress.NONE);
        return out;
    }

    @Test
    void packedCodesAndScalesCarryOverExactly() throws IOException {
        JsonNode config = config();
        Path hf = FormulaCheckpoint.writeBitNetPacked(config, 7, tokenizer(), dir.resolve("packed"));
        try (ZseFile file = ZseFile.open(convert(hf))) {
            int projections = 0;
            for (TensorInfo info : file.tensors()) {
                if (!BitNetProjections.isProjection(info.name())) {
                    assertTrue(info.type() != TensorType.TERNARY, info.name());
                    continue;
                }
                projections++;
                assertEquals(TensorType.TERNARY, info.type(), info.name());
                ZseTensor t = file.tensor(info.name());
                long[] shape = info.shape();
                int[] want = FormulaCheckpoint.ternaryValues(info.name(), shape, 7);
                for (int i = 0; i < want.length; i++) {
                    if (TernaryBlocks.code(t.data(), i) - 1 != want[i]) {
                        throw new AssertionError(info.name() + " element " + i + ": " + (TernaryBlocks.code(t.data(), i) - 1)
                                + " vs " + want[i]);
                    }
                }
                float weightScale = (float) Math.sqrt(2.0 * shape[1] / 3.0);
                assertEquals((float) (1.0 / weightScale), TernaryBlocks.scale(t.scales()), info.name() + " scale");
                assertEquals(shape[0] * shape[1] / 4, info.dataLength(), "2 bits per weight");
            }
            assertEquals(14, projections);
            file.verify();
        }
    }

    @Test
    void aCodeOfThreeIsRefusedNamingTheTensor() throws IOException {
        Path hf = FormulaCheckpoint.writeBitNetPacked(config(), 7, tokenizer(), dir.resolve("bad"));
        // Every 2-bit field of q_proj's first byte set to 3, found through the safetensors header's offsets.
        Path file = hf.resolve("model.safetensors");
        long headerLength;
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            headerLength = Long.reverseBytes(raf.readLong());
            String header = new String(Files.readAllBytes(file), 8, (int) headerLength, java.nio.charset.StandardCharsets.UTF_8);
            JsonNode offsets = JSON.readTree(header).get("model.layers.0.self_attn.q_proj.weight").get("data_offsets");
            raf.seek(8 + headerLength + offsets.get(0).asLong());
            raf.write(0xFF);
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> convert(hf));
        assertTrue(e.getMessage().contains("model.layers.0.self_attn.q_proj.weight")
                && e.getMessage().contains("code 3"), e.getMessage());
    }

    @Test
    void unsupportedOptionsAreRefusedByName() throws IOException {
        Map<String, String> cases = Map.of(
                "{\"quantization_config\": null}", "quantization_config is missing",
                "{\"quantization_config\": {\"quant_method\": \"bitnet\", \"use_rms_norm\": true}}",
                "quantization_config.use_rms_norm",
                "{\"quantization_config\": {\"quant_method\": \"bitnet\", \"linear_class\": \"fancy\"}}",
                "quantization_config.linear_class",
                "{\"quantization_config\": {\"quant_method\": \"gptq\"}}", "quantization_config.quant_method",
                "{\"quantization_config\": {\"quant_method\": \"bitnet\", \"modules_to_not_convert\": [\"model.layers.0.mlp\"]}}",
                "quantization_config.modules_to_not_convert",
                "{\"hidden_act\": \"silu\"}", "hidden_act");
        int i = 0;
        for (var c : cases.entrySet()) {
            ObjectNode config = config();
            JSON.readTree(c.getKey()).properties().forEach(e -> {
                if (e.getValue().isNull()) {
                    config.remove(e.getKey());
                } else {
                    config.set(e.getKey(), e.getValue());
                }
            });
            Path hf = dir.resolve("case" + i++);
            Files.createDirectories(hf);
            Files.writeString(hf.resolve("config.json"), config.toString());
            Files.write(hf.resolve("tokenizer.json"), tokenizer());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> convert(hf), c.getKey());
            assertTrue(e.getMessage().contains(c.getValue()), c.getKey() + " -> " + e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> ConvertOptions.of(TensorType.TERNARY));
    }

    /** zse synth's writer: packed U8 codes and weight_scale from a BitNet config; it converts and generates. */
    @Test
    void synthesizedBitNetConvertsAndGenerates() throws IOException {
        Map<String, Object> config = JSON.convertValue(config(), Map.class);
        Path hf = Files.createDirectories(dir.resolve("synth"));
        new SyntheticCheckpointWriter(config, SafetensorsDtype.BF16, 3, 1, TestModels.tinyStories(),
                new PrintStream(OutputStream.nullOutputStream())).write(hf);
        try (ZseFile file = ZseFile.open(convert(hf)); CpuBackend backend = TestKernels.backend("vector", 2)) {
            assertEquals(14, file.tensors().stream().filter(t -> t.type() == TensorType.TERNARY).count());
            LlamaModel model = LlamaModel.load(file, backend);
            float[] logits = model.forward(new int[]{1, 200, 300, 400}, 0, model.newCache(16));
            for (float v : logits) {
                assertTrue(Float.isFinite(v), "finite logits");
            }
        }
    }
}
