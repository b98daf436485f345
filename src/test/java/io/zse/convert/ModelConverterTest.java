package io.zse.convert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.TestModels;
import io.zse.format.QuantErrorBound;
import io.zse.format.SectionKind;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;
import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Converting the real TinyStories-656K checkpoint, and the errors convert must give. */
class ModelConverterTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"Q4_K", "Q5_K", "Q6_K", "Q5", "TERNARY"}, mode = EnumSource.Mode.EXCLUDE)
    void everyTypeDecodesWithinItsErrorBound(TensorType type) throws IOException {
        Path zse = TestModels.convertTinyStories(type, dir);
        try (ZseFile file = ZseFile.open(zse); HfCheckpoint source = HfCheckpoint.open(TestModels.tinyStories())) {
            file.verify();
            // Only lm_head is stored in the checkpoint; the tied embedding is read through its alias.
            assertEquals(ModelTensors.expected(ModelConfig.fromJson(file.configJson())).keySet(),
                    file.tensors().stream().map(TensorInfo::name).collect(java.util.stream.Collectors.toCollection(java.util.LinkedHashSet::new)));
            for (TensorInfo t : file.tensors()) {
                int n = (int) t.elementCount();
                float[] expected = new float[n];
                source.readFloats(t.name(), 0, n, expected, 0);
                float[] decoded = new float[n];
                ZseTensor view = file.tensor(t.name());
                TensorDecoder.decode(t.type(), t.groupSize(), view.data(), view.scales(), 0, n, decoded, 0);
                assertEquals(-1, QuantErrorBound.firstViolation(t.type(), t.groupSize(), expected, 0, decoded, 0, n),
                        t.name() + " as " + t.type());
                TensorType want = t.rank() == 1 ? TensorType.F32
                        : (type == TensorType.Q4 || type == TensorType.NF4) && t.name().equals(ModelTensors.EMBEDDINGS)
                        ? TensorType.Q8 : type;
                assertEquals(want, t.type(), t.name());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"Q4_K", "Q5_K", "Q5"})
    void theKQuantTypesAreRefusedForCheckpoints(TensorType type) {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ConvertOptions.of(type));
        assertEquals(type.name().toLowerCase() + " holds ggml's " + (type == TensorType.Q5 ? "Q5_0/Q5_1" : "K-quant")
                + " bits and is written only when importing a "
                + "GGUF; for a checkpoint use q8, q6_k, q4 or nf4", e.getMessage());
    }

    @Test
    void metadataAndTokenizerFilesRoundTripByteForByte() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        Path src = TestModels.tinyStories();
        try (ZseFile file = ZseFile.open(zse)) {
            Map<SectionKind, String> files = Map.of(SectionKind.HF_CONFIG, "config.json",
                    SectionKind.TOKENIZER, "tokenizer.json", SectionKind.TOKENIZER_CONFIG, "tokenizer_config.json",
                    SectionKind.GENERATION_CONFIG, "generation_config.json",
                    SectionKind.SPECIAL_TOKENS_MAP, "special_tokens_map.json");
            for (Map.Entry<SectionKind, String> e : files.entrySet()) {
                assertArrayEquals(Files.readAllBytes(src.resolve(e.getValue())),
                        file.sectionBytes(e.getKey()).orElseThrow(), e.getValue());
            }
            ModelConfig c = ModelConfig.fromJson(file.configJson());
            assertEquals(new ModelConfig("llama", 128, 2, 8, 4, 16, 384, 2048, 512, 10000.0, null, 1e-6, true, false,
                    false, null, 1, List.of(2), null), c);
            assertEquals(c, ModelConfig.fromJson(c.toJson()));
        }
    }

    @Test
    void q4GroupSizesAndOverrides() throws IOException {
        Path zse = TestModels.convert(TestModels.tinyStories(),
                new ConvertOptions(TensorType.Q4, 128, null, TensorType.F16, false), dir.resolve("g128.zse"));
        try (ZseFile file = ZseFile.open(zse)) {
            assertEquals(TensorType.F16, file.tensors().getFirst().type(), "tied embeddings take the lm-head type");
            TensorInfo q = file.tensors().stream().filter(t -> t.name().endsWith("q_proj.weight")).findFirst().orElseThrow();
            assertEquals(TensorType.Q4, q.type());
            assertEquals(128, q.groupSize());
        }
        assertThrows(IllegalArgumentException.class, () -> new ConvertOptions(TensorType.Q4, 48, null, null, false));
        assertThrows(IllegalArgumentException.class, () -> new ConvertOptions(TensorType.Q8, 64, null, null, false));
    }

    @Test
    void existingTargetNeedsForce() throws IOException {
        Path out = TestModels.convertTinyStories(TensorType.F16, dir);
        assertThrows(FileAlreadyExistsException.class, () -> ModelConverter.convert(TestModels.tinyStories(), out,
                ConvertOptions.of(TensorType.F16), ModelConverter.Progress.NONE));
        ModelConverter.convert(TestModels.tinyStories(), out,
                new ConvertOptions(TensorType.Q8, 32, null, null, true), ModelConverter.Progress.NONE);
        try (ZseFile file = ZseFile.open(out)) {
            assertEquals(TensorType.Q8, file.tensors().get(2).type());
        }
    }

    @Test
    void missingFiles() throws IOException {
        Path copy = TestModels.copyOf(TestModels.tinyStories(), dir.resolve("hf"));
        Files.delete(copy.resolve("tokenizer.json"));
        IOException e = assertThrows(NoSuchFileException.class, () -> convert(copy));
        assertTrue(e.getMessage().contains("tokenizer.json"), e.getMessage());
        Files.delete(copy.resolve("config.json"));
        e = assertThrows(NoSuchFileException.class, () -> convert(copy));
        assertTrue(e.getMessage().contains("config.json"), e.getMessage());
        assertThrows(NoSuchFileException.class, () -> convert(dir.resolve("nowhere")));
        Path noWeights = TestModels.copyOf(TestModels.tinyStories(), dir.resolve("hf2"));
        Files.delete(noWeights.resolve("model.safetensors"));
        e = assertThrows(IOException.class, () -> convert(noWeights));
        assertTrue(e.getMessage().contains("safetensors"), e.getMessage());
    }

    @Test
    void unsupportedArchitectureNamesTheField() throws IOException {
        Path copy = editConfig("arch", c -> c.putArray("architectures").add("GPT2LMHeadModel"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> convert(copy));
        assertEquals("config.json: architectures [\"GPT2LMHeadModel\"] is not supported (supported: LlamaForCausalLM, "
                + "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, "
                + "Gemma3ForCausalLM, BitNetForCausalLM)", e.getMessage());
        Path yarn = editConfig("yarn", c -> c.putObject("rope_scaling").put("rope_type", "yarn").put("factor", 4.0));
        e = assertThrows(IllegalArgumentException.class, () -> convert(yarn));
        assertTrue(e.getMessage().startsWith("config.json: rope_scaling.rope_type 'yarn'"), e.getMessage());
    }

    @Test
    void shapeMismatchBetweenConfigAndTensors() throws IOException {
        Path copy = editConfig("shape", c -> c.put("intermediate_size", 512));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> convert(copy));
        assertTrue(e.getMessage().startsWith("shape mismatch: model.layers.0.mlp.gate_proj.weight is [384, 128]"),
                e.getMessage());
    }

    @Test
    void ropeParametersOfTransformers5AndLlama3Scaling() throws IOException {
        Path copy = editConfig("rope5", c -> {
            c.remove("rope_theta");
            c.remove("rope_scaling");
            c.putObject("rope_parameters").put("rope_type", "llama3").put("rope_theta", 500000.0).put("factor", 32.0)
                    .put("low_freq_factor", 1.0).put("high_freq_factor", 4.0).put("original_max_position_embeddings", 256);
        });
        Path zse = convert(copy);
        try (ZseFile file = ZseFile.open(zse)) {
            ModelConfig c = ModelConfig.fromJson(file.configJson());
            assertEquals(500000.0, c.ropeTheta());
            assertEquals(io.zse.model.RopeScaling.llama3(32, 1, 4, 256), c.ropeScaling());
        }
        Path linear = editConfig("linear", c -> c.putObject("rope_scaling").put("type", "linear").put("factor", 2.0));
        try (ZseFile file = ZseFile.open(convert(linear))) {
            assertEquals(io.zse.model.RopeScaling.linear(2), ModelConfig.fromJson(file.configJson()).ropeScaling());
        }
    }

    @Test
    void aConvertThatFailsWhileWritingLeavesNoFileBehind() throws IOException {
        // A NaN in the last stored element is found only while tensors are being written.
        Path copy = TestModels.copyOf(TestModels.tinyStories(), dir.resolve("nan"));
        Path weights = copy.resolve("model.safetensors");
        weights.toFile().setWritable(true);
        byte[] bytes = Files.readAllBytes(weights);
        java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(bytes.length - 4, Float.NaN);
        Files.write(weights, bytes);
        Path out = dir.resolve("out.zse");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelConverter.convert(copy,
                out, ConvertOptions.of(TensorType.Q8), ModelConverter.Progress.NONE));
        assertTrue(e.getMessage().contains("NaN"), e.getMessage());
        try (Stream<Path> files = Files.list(dir)) {
            assertFalse(files.anyMatch(p -> p.getFileName().toString().contains("out.zse")));
        }
    }

    private Path convert(Path hfDir) throws IOException {
        Path out = Files.createTempFile(dir, "model", ".zse");
        Files.delete(out);
        ModelConverter.convert(hfDir, out, ConvertOptions.of(TensorType.Q8), ModelConverter.Progress.NONE);
        return out;
    }

    private Path editConfig(String name, java.util.function.Consumer<ObjectNode> edit) throws IOException {
        Path copy = TestModels.copyOf(TestModels.tinyStories(), dir.resolve(name));
        copy.resolve("config.json").toFile().setWritable(true);
        ObjectNode config = (ObjectNode) JSON.readTree(copy.resolve("config.json").toFile());
        edit.accept(config);
        Files.delete(copy.resolve("config.json"));
        JSON.writeValue(copy.resolve("config.json").toFile(), config);
        return copy;
    }
}
