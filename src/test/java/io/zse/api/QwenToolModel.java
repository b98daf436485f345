package io.zse.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.zse.TestModels;
import io.zse.convert.ConvertOptions;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SyntheticCheckpointWriter;
import io.zse.format.TensorType;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * A tiny Qwen2-shaped model with random weights and the real Qwen3 tokenizer (151K tokens) and chat template: the
 * worst case for constrained decoding (a random model never wants to close a string) and a template that teaches
 * Hermes-style tool calls. Built once per test run into target/.
 */
final class QwenToolModel {
    static final String ID = "qwen-tools";
    static final Path DIR = Path.of("target", "qwen-tools-" + ProcessHandle.current().pid());
    static final Path MODEL = DIR.resolve("qwen-tools-q8.zse");

    static {
        // the profile and the test class each load this class (test and Quarkus class loaders): build the file once
        synchronized (System.getProperties()) {
            if (System.getProperty(MODEL.toString()) == null) {
                build();
                System.setProperty(MODEL.toString(), "built");
            }
        }
    }

    private QwenToolModel() {
    }

    private static void build() {
        try {
            Path tokenizer = Files.createDirectories(DIR.resolve("tokenizer"));
            try (InputStream in = new GZIPInputStream(resource("/tokenizers/qwen3/tokenizer.json.gz"))) {
                Files.copy(in, tokenizer.resolve("tokenizer.json"), StandardCopyOption.REPLACE_EXISTING);
            }
            try (InputStream in = resource("/tokenizers/qwen3/tokenizer_config.json")) {
                Files.copy(in, tokenizer.resolve("tokenizer_config.json"), StandardCopyOption.REPLACE_EXISTING);
            }
            Map<String, Object> config = new LinkedHashMap<>();
            config.put("architectures", new String[]{"Qwen2ForCausalLM"});
            config.put("model_type", "qwen2");
            config.put("hidden_size", 64);
            config.put("intermediate_size", 128);
            config.put("num_hidden_layers", 2);
            config.put("num_attention_heads", 4);
            config.put("num_key_value_heads", 2);
            config.put("max_position_embeddings", 2048);
            config.put("rms_norm_eps", 1e-6);
            config.put("rope_theta", 1000000.0);
            config.put("tie_word_embeddings", true);
            config.put("vocab_size", 151936);
            config.put("bos_token_id", 151643);
            config.put("eos_token_id", 151645);
            config.put("hidden_act", "silu");
            Path checkpoint = Files.createDirectories(DIR.resolve("checkpoint"));
            new SyntheticCheckpointWriter(config, SafetensorsDtype.F32, 18, 1, tokenizer,
                    new PrintStream(OutputStream.nullOutputStream())).write(checkpoint);
            TestModels.convert(checkpoint, ConvertOptions.of(TensorType.Q8), MODEL);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static InputStream resource(String path) {
        InputStream in = QwenToolModel.class.getResourceAsStream(path);
        if (in == null) {
            throw new IllegalStateException("missing test resource " + path);
        }
        return in;
    }

    public static final class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // constrained sampling over 151K tokens on a busy 2-core machine: more than REST Assured's default 30 s
            return Map.of("zse.model-path", MODEL.toAbsolutePath().toString(), "zse.model-id", ID,
                    "quarkus.http.test-timeout", "180s");
        }
    }
}
