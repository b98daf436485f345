package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.convert.ConvertOptions;
import io.zse.convert.HfCheckpoint;
import io.zse.convert.ModelPreset;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SafetensorsTensor;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class SynthCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** Runs zse with stderr captured; returns {exit code, stderr}. */
    private static Object[] zse(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = ZseCommand.execute(args);
            return new Object[]{code, err.toString(StandardCharsets.UTF_8)};
        } finally {
            System.setErr(saved);
        }
    }

    /** The presets' default tokenizers live in ../shared (some may not be redistributed); without it, skip. */
    private static void requireSharedTokenizers() {
        assumeTrue(Files.isDirectory(Path.of("../shared/tokenizers")), "../shared/tokenizers is not beside this checkout");
    }

    @Test
    void qwenLayoutWithBiasesAndTiedEmbeddings() throws IOException {
        requireSharedTokenizers();
        Path out = dir.resolve("qwen");
        // Real Qwen2.5-0.5B widths, one layer, shrunken vocabulary and MLP to keep the file small; the special ids
        // moved inside the shrunken vocabulary (the checkpoint is refused with ids it has no rows for).
        Object[] r = zse("synth", "--preset", "qwen2.5-0.5b", "--layers", "1", "--set", "vocab_size=512",
                "--set", "intermediate_size=256", "--set", "bos_token_id=0", "--set", "eos_token_id=1",
                "-o", out.toString());
        assertEquals(0, r[0], (String) r[1]);
        assertTrue(((String) r[1]).contains("synth: wrote"), (String) r[1]);

        JsonNode config = JSON.readTree(out.resolve("config.json").toFile());
        assertEquals("Qwen2ForCausalLM", config.get("architectures").get(0).asText());
        assertEquals(896, config.get("hidden_size").asInt());
        assertEquals(14, config.get("num_attention_heads").asInt());
        assertEquals(2, config.get("num_key_value_heads").asInt());
        assertEquals(1, config.get("num_hidden_layers").asInt());
        assertEquals(512, config.get("vocab_size").asInt());
        assertEquals(1_000_000.0, config.get("rope_theta").asDouble());
        assertEquals(1e-6, config.get("rms_norm_eps").asDouble());
        assertTrue(config.get("tie_word_embeddings").asBoolean());
        assertEquals("bfloat16", config.get("torch_dtype").asText());
        assertEquals(1, JSON.readTree(out.resolve("generation_config.json").toFile()).get("eos_token_id").asInt());
        assertArrayEquals(Files.readAllBytes(Path.of("../shared/tokenizers/qwen3/tokenizer.json")),
                Files.readAllBytes(out.resolve("tokenizer.json")));
        assertTrue(Files.exists(out.resolve("tokenizer_config.json")));

        try (HfCheckpoint ckpt = HfCheckpoint.open(out)) {
            List<String> names = ckpt.tensors().stream().map(SafetensorsTensor::name).toList();
            String p = "model.layers.0.";
            assertEquals(List.of("model.embed_tokens.weight", p + "input_layernorm.weight",
                    p + "self_attn.q_proj.weight", p + "self_attn.q_proj.bias",
                    p + "self_attn.k_proj.weight", p + "self_attn.k_proj.bias",
                    p + "self_attn.v_proj.weight", p + "self_attn.v_proj.bias", p + "self_attn.o_proj.weight",
                    p + "post_attention_layernorm.weight", p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight",
                    p + "mlp.down_proj.weight", "model.norm.weight"), names);
            assertTrue(ckpt.tensors().stream().allMatch(t -> t.dtype() == SafetensorsDtype.BF16));
            assertArrayEquals(new long[]{128, 896}, shape(ckpt, p + "self_attn.k_proj.weight"));
            assertArrayEquals(new long[]{128}, shape(ckpt, p + "self_attn.v_proj.bias"));
            assertArrayEquals(new long[]{896, 896}, shape(ckpt, p + "self_attn.o_proj.weight"));
            assertArrayEquals(new long[]{896, 256}, shape(ckpt, p + "mlp.down_proj.weight"));
            assertArrayEquals(new long[]{512, 896}, shape(ckpt, "model.embed_tokens.weight"));

            double[] matrix = meanAndStd(ckpt, "model.embed_tokens.weight");
            assertEquals(0, matrix[0], 0.001);
            assertEquals(0.02, matrix[1], 0.001);
            double[] norm = meanAndStd(ckpt, p + "input_layernorm.weight");
            assertEquals(1, norm[0], 0.005);
        }
    }

    @Test
    void shardedTinyLlamaWithSeparateHeadIsDeterministic() throws IOException {
        requireSharedTokenizers();
        List<String> args = List.of("synth", "--preset", "tinyllama-1.1b", "--layers", "2", "--shards", "3",
                "--dtype", "f16", "--seed", "7", "--set", "vocab_size=300", "--set", "hidden_size=128",
                "--set", "intermediate_size=64", "--set", "num_attention_heads=4", "--set", "num_key_value_heads=2");
        Path out = dir.resolve("tiny");
        Object[] r = zse(with(args, "-o", out.toString()));
        assertEquals(0, r[0], (String) r[1]);
        for (int k = 1; k <= 3; k++) {
            assertTrue(Files.exists(out.resolve("model-0000" + k + "-of-00003.safetensors")));
        }
        JsonNode config = JSON.readTree(out.resolve("config.json").toFile());
        assertFalse(config.get("tie_word_embeddings").asBoolean());
        assertTrue(config.get("rope_scaling").isNull());
        assertEquals(2048, config.get("max_position_embeddings").asInt());
        assertEquals("float16", config.get("torch_dtype").asText());
        try (HfCheckpoint ckpt = HfCheckpoint.open(out)) {
            assertEquals(1 + 2 * 9 + 2, ckpt.tensors().size());
            assertArrayEquals(new long[]{300, 128}, shape(ckpt, "lm_head.weight"));
            assertArrayEquals(new long[]{64, 128}, shape(ckpt, "model.layers.1.self_attn.v_proj.weight"));
            assertTrue(ckpt.tensors().stream().allMatch(t -> t.dtype() == SafetensorsDtype.F16));
            assertEquals(Files.readString(Path.of("../shared/tokenizers/mistral-7b-v0.1/tokenizer.json")),
                    Files.readString(out.resolve("tokenizer.json")));
        }
        // Refuses a non-empty directory, then rewrites it identically with --force.
        byte[] before = Files.readAllBytes(out.resolve("model-00002-of-00003.safetensors"));
        r = zse(with(args, "-o", out.toString()));
        assertEquals(1, r[0]);
        assertTrue(((String) r[1]).contains("is not empty (pass --force"), (String) r[1]);
        r = zse(with(args, "-o", out.toString(), "--force"));
        assertEquals(0, r[0], (String) r[1]);
        assertArrayEquals(before, Files.readAllBytes(out.resolve("model-00002-of-00003.safetensors")));
    }

    /** Phi-3's checkpoint holds fused qkv_proj and gate_up_proj; the converter stores their row ranges apart. */
    @Test
    void phi3FusedProjectionsAreSplitAtConvertTime() throws IOException {
        requireSharedTokenizers();
        Path out = dir.resolve("phi3");
        Object[] r = zse("synth", "--preset", "phi-3-mini-4k", "--layers", "1", "--dtype", "f32", "--set",
                "vocab_size=256", "--set", "hidden_size=64", "--set", "intermediate_size=96", "--set",
                "num_attention_heads=4", "--set", "num_key_value_heads=2", "--set", "eos_token_id=2", "-o",
                out.toString());
        assertEquals(0, r[0], (String) r[1]);
        Path zse = TestModels.convert(out, ConvertOptions.of(TensorType.F32), dir.resolve("phi3.zse"));
        String p = "model.layers.0.";
        try (HfCheckpoint ckpt = HfCheckpoint.open(out); ZseFile file = ZseFile.open(zse)) {
            assertArrayEquals(new long[]{128, 64}, shape(ckpt, p + "self_attn.qkv_proj.weight"));
            assertArrayEquals(new long[]{192, 64}, shape(ckpt, p + "mlp.gate_up_proj.weight"));
            assertFalse(file.hasTensor(p + "self_attn.qkv_proj.weight"));
            // q: rows 0..63, k: 64..95, v: 96..127 of qkv; gate: rows 0..95, up: 96..191 of gate_up (64 wide)
            assertSameRows(ckpt, p + "self_attn.qkv_proj.weight", 0, file, p + "self_attn.q_proj.weight", 64);
            assertSameRows(ckpt, p + "self_attn.qkv_proj.weight", 64, file, p + "self_attn.k_proj.weight", 32);
            assertSameRows(ckpt, p + "self_attn.qkv_proj.weight", 96, file, p + "self_attn.v_proj.weight", 32);
            assertSameRows(ckpt, p + "mlp.gate_up_proj.weight", 0, file, p + "mlp.gate_proj.weight", 96);
            assertSameRows(ckpt, p + "mlp.gate_up_proj.weight", 96, file, p + "mlp.up_proj.weight", 96);
        }
    }

    private static void assertSameRows(HfCheckpoint ckpt, String source, int firstRow, ZseFile file, String name,
                                       int rows) throws IOException {
        float[] expected = new float[rows * 64];
        ckpt.readFloats(source, (long) firstRow * 64, expected.length, expected, 0);
        ZseTensor t = file.tensor(name);
        assertEquals(expected.length, t.info().elementCount(), name);
        float[] actual = new float[expected.length];
        TensorDecoder.decode(t.type(), t.groupSize(), t.data(), t.scales(), 0, actual.length, actual, 0);
        assertArrayEquals(expected, actual, name);
    }

    @Test
    void llama32ConfigHasLlama3RopeScaling() throws IOException {
        requireSharedTokenizers();
        Path out = dir.resolve("llama");
        Object[] r = zse("synth", "--preset", "llama-3.2-1b", "--layers", "1", "--dtype", "f32",
                "--set", "vocab_size=256", "--set", "intermediate_size=32", "--set", "bos_token_id=0", "--set",
                "eos_token_id=1", "-o", out.toString());
        assertEquals(0, r[0], (String) r[1]);
        JsonNode config = JSON.readTree(out.resolve("config.json").toFile());
        JsonNode scaling = config.get("rope_scaling");
        assertEquals("llama3", scaling.get("rope_type").asText());
        assertEquals(32.0, scaling.get("factor").asDouble());
        assertEquals(1.0, scaling.get("low_freq_factor").asDouble());
        assertEquals(4.0, scaling.get("high_freq_factor").asDouble());
        assertEquals(8192, scaling.get("original_max_position_embeddings").asInt());
        assertEquals(500000.0, config.get("rope_theta").asDouble());
        assertEquals(64, config.get("head_dim").asInt());
        assertEquals(0, config.get("bos_token_id").asInt());
        assertEquals("float32", config.get("torch_dtype").asText());
        try (HfCheckpoint ckpt = HfCheckpoint.open(out)) {
            assertFalse(ckpt.has("lm_head.weight"));
            assertArrayEquals(new long[]{2048, 2048}, shape(ckpt, "model.layers.0.self_attn.q_proj.weight"));
            assertArrayEquals(new long[]{512, 2048}, shape(ckpt, "model.layers.0.self_attn.k_proj.weight"));
        }
    }

    @Test
    void presetsMatchPublishedShapes() {
        assertEquals(1_235_814_400L, paramsOf(ModelPreset.LLAMA_3_2_1B));
        assertEquals(494_032_768L, paramsOf(ModelPreset.QWEN2_5_0_5B));
        assertEquals(596_049_920L, paramsOf(ModelPreset.QWEN3_0_6B)); // 0.44B of it outside the embeddings
        assertEquals(3_821_079_552L, paramsOf(ModelPreset.PHI_3_MINI_4K));
        assertEquals(2_614_341_888L, paramsOf(ModelPreset.GEMMA_2_2B));
        assertEquals(999_885_952L, paramsOf(ModelPreset.GEMMA_3_1B));
        assertEquals(1_100_048_384L, paramsOf(ModelPreset.TINYLLAMA_1_1B));
        assertEquals(8_030_261_248L, paramsOf(ModelPreset.LLAMA_3_8B));
        assertEquals(2_412_820_480L, paramsOf(ModelPreset.BITNET_B1_58_2B_4T)); // sub-norms included, embeddings tied
    }

    @Test
    void failsWithOneLineMessages() {
        Object[] r = zse("synth", "--preset", "gpt-5", "-o", dir.resolve("x").toString());
        assertEquals(1, r[0]);
        assertTrue(((String) r[1]).startsWith("zse synth: unknown preset 'gpt-5' (known: llama-3.2-1b,"), (String) r[1]);
        r = zse("synth", "--preset", "qwen2.5-0.5b", "--tokenizer", dir.toString(), "-o", dir.resolve("y").toString());
        assertEquals(1, r[0]);
        assertEquals("zse synth: no tokenizer.json in " + dir, ((String) r[1]).strip());
        r = zse("synth", "--preset", "qwen2.5-0.5b", "--dtype", "q4", "-o", dir.resolve("z").toString());
        assertTrue(((String) r[1]).contains("unknown dtype 'q4'"), (String) r[1]);
    }

    private static long paramsOf(ModelPreset preset) {
        return io.zse.convert.HfConfigNormalizer.normalize(new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(preset.config()), null).parameterCount();
    }

    private static long[] shape(HfCheckpoint ckpt, String name) {
        return ckpt.tensor(name).orElseThrow().shape();
    }

    private static double[] meanAndStd(HfCheckpoint ckpt, String name) throws IOException {
        long n = ckpt.tensor(name).orElseThrow().elementCount();
        float[] chunk = new float[4096];
        double sum = 0;
        double sumSq = 0;
        for (long first = 0; first < n; first += chunk.length) {
            int count = (int) Math.min(chunk.length, n - first);
            ckpt.readFloats(name, first, count, chunk, 0);
            for (int i = 0; i < count; i++) {
                sum += chunk[i];
                sumSq += (double) chunk[i] * chunk[i];
            }
        }
        double mean = sum / n;
        return new double[]{mean, Math.sqrt(sumSq / n - mean * mean)};
    }

    private static String[] with(List<String> args, String... more) {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }
}
