package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ConvertOptions;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.QualityComparison;
import io.zse.generate.QualityComparison.Report;
import io.zse.generate.QualityComparison.Side;
import io.zse.tokenizer.TestTokenizers;
import io.zse.tokenizer.Tokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the native kernels' int8 activations cost on each architecture's tiny checkpoint (formula weights, real
 * tokenizer): the same quantized file run on the native kernels (Q8 and Q4 products take activations quantized to
 * int8 per block of 32, as llama.cpp's do) and on the vector kernels (float activations), teacher-forced over the
 * sampled TinyStories text in the model's own tokenizer. Each side is also compared with the F32 file, so the printed
 * rows give the int8 cost beside the weight quantization's own (the table in docs/quality.md).
 * <p>
 * Bounds: the KL between int8 and float activations on the same weights is at most 1e-3 nats, or a third of the KL
 * the 4-bit weights' own rounding causes where that is larger (measured: 1e-5 to 4e-4; on Q8 weights about 1.5× the
 * weights' own KL, as with llama.cpp's Q8_0 × Q8_0), and the perplexity moves by at most 1 %. A wrong block scale or
 * rounding in an int8 kernel costs orders of magnitude more.
 */
class ActivationQuantizationQualityTest {
    private static final int PREDICTIONS = 256;

    @TempDir
    static Path dir;

    @BeforeAll
    static void nativeLibrary() {
        assumeTrue(TestKernels.nativeUnavailable().isEmpty(),
                () -> "no native CPU kernels here: " + TestKernels.nativeUnavailable().orElse(""));
    }

    static Stream<Arguments> cases() {
        return Stream.of("llama-untied", "llama3-rope-scaling", "qwen2-bias-tied", "mistral-sliding-window",
                        "qwen3-qk-norm", "phi3-longrope")
                .flatMap(name -> Stream.of(TensorType.Q8, TensorType.Q4, TensorType.NF4)
                        .map(type -> Arguments.of(name, type)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void int8ActivationsCostLittleNextToTheWeightQuantization(String name, TensorType type) throws IOException {
        JsonNode golden = ArchitectureGoldenTest.read("/golden/architectures/" + name + ".json");
        Path f32 = ArchitectureGoldenTest.converted(name, golden, GreedyGolden.of(golden), dir);
        Path quantized = TestModels.convert(dir.resolve(name + "-hf"), ConvertOptions.of(type),
                dir.resolve(name + "-" + type + ".zse"));
        Tokenizer tokenizer = Tokenizer.fromJson(TestTokenizers.json(golden.get("tokenizer").asText()));
        int[] text = tokenizer.encode(evalText(), true);

        try (ZseFile reference = ZseFile.open(f32); ZseFile model = ZseFile.open(quantized);
             CpuBackend vector = TestKernels.backend("vector", 2);
             CpuBackend nativeKernels = TestKernels.backend("native", 2)) {
            Side f32Side = side(reference, vector);
            Side floatActivations = side(model, vector);
            Side int8Activations = side(model, nativeKernels);
            Report weights = QualityComparison.compare(f32Side, floatActivations, text, PREDICTIONS);
            Report int8VsFloat = QualityComparison.compare(floatActivations, int8Activations, text, PREDICTIONS);
            Report both = QualityComparison.compare(f32Side, int8Activations, text, PREDICTIONS);
            System.out.printf("| %s | %s | %.6f / %.6f / %.2f %% | %.6f / %.2f %% | %.6f / %.2f %% |%n", name, type,
                    int8VsFloat.meanKl(), int8VsFloat.p99Kl(), 100 * int8VsFloat.top1Agreement(),
                    both.meanKl(), 100 * both.top1Agreement(), weights.meanKl(), 100 * weights.top1Agreement());

            assertTrue(int8VsFloat.meanKl() <= Math.max(1e-3, weights.meanKl() / 3),
                    name + " " + type + ": int8 activations add KL " + int8VsFloat.meanKl()
                            + " against the weights' own " + weights.meanKl());
            double perplexityChange = Math.abs(both.modelPerplexity() / weights.modelPerplexity() - 1);
            assertTrue(perplexityChange <= 0.01, name + " " + type + ": perplexity " + weights.modelPerplexity()
                    + " with float activations, " + both.modelPerplexity() + " with int8");
        }
    }

    private static Side side(ZseFile file, CpuBackend backend) {
        return new Side(LlamaModel.load(file, backend), KvCacheType.F32);
    }

    private static String evalText() throws IOException {
        try (InputStream in = ActivationQuantizationQualityTest.class.getResourceAsStream(
                "/eval/tinystories-sampled.txt")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
