package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ConvertOptions;
import io.zse.convert.HfConfigNormalizer;
import io.zse.format.LittleEndian;
import io.zse.format.SectionKind;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.format.ZseWriter;
import io.zse.tokenizer.TestTokenizers;
import io.zse.tokenizer.Tokenizer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each architecture against transformers: a tiny checkpoint with formula weights and a real tokenizer
 * ({@link FormulaCheckpoint}, golden/architectures/*.json from tools/reference/tiny_models.py), converted to F32
 * .zse, must give transformers' 64 greedy ids exactly and its top-5 logits at every step.
 * <p>
 * Tolerance 1e-4 · max(1, |logit|): these logits are at most about 5.4, and float32 runs that differ only in summation
 * order (transformers vs our kernels, or transformers on two CPUs) differ by about 1e-5; every feature under test
 * moves logits by more than 1 when removed (recorded in each golden's "checks.ablation"), and the smallest top-1 margin
 * of any step is at least 1e-3, so rounding cannot flip a greedy choice.
 */
class ArchitectureGoldenTest {
    private static final double LOGIT_TOLERANCE = 1e-4;

    @TempDir
    static Path dir;

    /** Every architecture on each CPU kernel family. */
    static Stream<Arguments> architectures() {
        return Stream.of("llama-untied", "llama3-rope-scaling", "qwen2-bias-tied", "mistral-sliding-window",
                        "qwen3-qk-norm", "phi3-longrope", "gemma2-softcap-local",
                        "gemma3-local-global")
                .flatMap(name -> Stream.of(Arguments.of(name, "vector"), Arguments.of(name, "scalar")));
    }

    /** Gemma's ops (GeGLU, scaling, capped attention) also on the native kernels' backend. */
    static Stream<Arguments> gemmaOnNativeKernels() {
        return Stream.of(Arguments.of("gemma2-softcap-local", "native"), Arguments.of("gemma3-local-global", "native"));
    }

    @ParameterizedTest(name = "{0} on {1} kernels")
    @MethodSource({"architectures", "gemmaOnNativeKernels"})
    void f32ReproducesTransformers(String name, String kernels) throws IOException {
        JsonNode golden = read("/golden/architectures/" + name + ".json");
        try (ZseFile file = ZseFile.open(converted(name, golden, GreedyGolden.of(golden), dir));
             CpuBackend backend = TestKernels.backend(kernels, 2)) {
            for (GreedyGolden run : GreedyGolden.allOf(golden)) {
                double maxDiff = run.assertReproducedBy(LlamaModel.load(file, backend), LOGIT_TOLERANCE);
                System.out.printf("%s F32, %s kernels, %d prompt ids: 64 greedy ids match, max |logit - transformers| "
                        + "= %.2e%n", name, kernels, run.promptIds().length, maxDiff);
            }
        }
    }

    /**
     * The first Phi-3 imports multiplied q's and k's rows by LongRoPE's attention factor and wrote no
     * {@code factor_in_weights}; such a file (rebuilt here from today's conversion) must still reproduce transformers,
     * the engine not applying the factor a second time.
     */
    @ParameterizedTest
    @ValueSource(strings = "phi3-longrope")
    void aLongropeFileWithTheFactorInItsWeightsIsReadAsOfOld(String name) throws IOException {
        JsonNode golden = read("/golden/architectures/" + name + ".json");
        Path legacy = dir.resolve(name + "-factor-in-weights.zse");
        try (ZseFile today = ZseFile.open(converted(name, golden, GreedyGolden.of(golden), dir))) {
            ModelConfig c = ModelConfig.fromJson(today.configJson());
            assertEquals(false, c.ropeScaling().factorInWeights());
            String config = today.configJson().replaceFirst(",\\s*\"factor_in_weights\"\\s*:\\s*false", "");
            assertEquals(true, ModelConfig.fromJson(config).ropeScaling().factorInWeights(), config);
            float factor = (float) c.ropeScaling().factor();
            Map<SectionKind, byte[]> sections = new EnumMap<>(SectionKind.class);
            for (SectionKind kind : SectionKind.values()) {
                if (kind != SectionKind.TENSOR_INDEX) {
                    today.sectionBytes(kind).ifPresent(bytes -> sections.put(kind, bytes));
                }
            }
            sections.put(SectionKind.CONFIG, config.getBytes(StandardCharsets.UTF_8));
            List<TensorInfo> planned = today.tensors().stream()
                    .map(t -> TensorInfo.planned(t.name(), t.type(), t.shape(), t.groupSize())).toList();
            try (ZseWriter writer = ZseWriter.create(legacy, sections, planned)) {
                for (TensorInfo t : today.tensors()) {
                    float[] values = today.tensor(t.name()).data().toArray(LittleEndian.FLOAT);
                    if (t.name().contains("self_attn.q_proj") || t.name().contains("self_attn.k_proj")) {
                        for (int i = 0; i < values.length; i++) {
                            values[i] *= factor;
                        }
                    }
                    ZseWriter.TensorSink sink = writer.nextTensor();
                    MemorySegment bytes = MemorySegment.ofArray(new byte[values.length * Float.BYTES]);
                    MemorySegment.copy(values, 0, bytes, LittleEndian.FLOAT, 0, values.length);
                    sink.writeData(bytes);
                    sink.finish();
                }
                writer.finish();
            }
        }
        try (ZseFile file = ZseFile.open(legacy); CpuBackend backend = TestKernels.backend("vector", 2)) {
            for (GreedyGolden run : GreedyGolden.allOf(golden)) {
                run.assertReproducedBy(LlamaModel.load(file, backend), LOGIT_TOLERANCE);
            }
        }
    }

    /**
     * The architecture's checkpoint converted to F32 .zse, once for both kernel families, after checking its tokenizer
     * and formula weights against the ones transformers ran.
     */
    static Path converted(String name, JsonNode golden, GreedyGolden run, Path dir) throws IOException {
        Path zse = dir.resolve(name + ".zse");
        if (Files.exists(zse)) {
            return zse;
        }
        JsonNode hfConfig = golden.get("config");
        byte[] tokenizerJson = TestTokenizers.json(golden.get("tokenizer").asText());
        Tokenizer tokenizer = Tokenizer.fromJson(tokenizerJson);
        assertEquals(hfConfig.get("vocab_size").asInt(), tokenizer.vocabSize(), "vocab_size is the tokenizer's size");
        assertArrayEquals(run.promptIds(), tokenizer.encode(run.prompt(), true), "prompt ids");

        long seed = golden.get("weights").get("seed").asLong();
        assertSameWeightsAsThePythonFormula(hfConfig, seed, golden.get("weights").get("samples"));
        Path hf = FormulaCheckpoint.write(hfConfig, seed, tokenizerJson, dir.resolve(name + "-hf"));
        return TestModels.convert(hf, ConvertOptions.of(TensorType.F32), zse);
    }

    /** The same tensor names as transformers' state dict, and the same values (first two, and the sum). */
    private static void assertSameWeightsAsThePythonFormula(JsonNode hfConfig, long seed, JsonNode samples) {
        Map<String, long[]> shapes = ModelTensors.checkpoint(HfConfigNormalizer.normalize(hfConfig, null));
        TreeSet<String> python = new TreeSet<>();
        samples.fieldNames().forEachRemaining(python::add);
        assertEquals(python, new TreeSet<>(shapes.keySet()), "tensor names");
        for (var e : shapes.entrySet()) {
            JsonNode sample = samples.get(e.getKey());
            long count = 1;
            for (long d : e.getValue()) {
                count *= d;
            }
            float[] values = new float[(int) count];
            FormulaCheckpoint.fill(e.getKey(), e.getValue(), seed, 0, values, values.length);
            assertEquals((float) sample.get("first").get(0).asDouble(), values[0], e.getKey());
            assertEquals((float) sample.get("first").get(1).asDouble(), values[1], e.getKey());
            double sum = 0;
            for (float v : values) {
                sum += v;
            }
            assertEquals(sample.get("sum").asDouble(), sum, 1e-4, e.getKey() + " sum");
        }
    }

    static JsonNode read(String resource) throws IOException {
        try (InputStream in = ArchitectureGoldenTest.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + resource);
            }
            return new ObjectMapper().readTree(in);
        }
    }
}
