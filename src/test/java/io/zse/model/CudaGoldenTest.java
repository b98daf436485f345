package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cuda.CudaTestBackends;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Greedy decoding end to end on the CUDA backend (the CPU emulation in every build, a GPU where one is): TinyStories-656K
 * (all 64 greedy ids of each case) and each tiny architecture checkpoint (its first 12) in F32 against transformers'
 * goldens, with the tolerances of {@link LlamaModelGoldenTest} and {@link ArchitectureGoldenTest}; every other storage
 * type against the CPU backend on the same file.
 */
class CudaGoldenTest {
    private static final double LOGIT_TOLERANCE = 1e-4;
    private static final int QUANTIZED_TOKENS = 24;
    /**
     * Greedy ids checked per architecture: their vocabularies reach 151,669 rows, and the emulation takes about a second
     * of CPU per output-projection pass of that size (each row's warp reduction is 32 cooperative threads).
     */
    private static final int ARCHITECTURE_TOKENS = 12;

    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.cudaOnly();

    @TempDir
    static Path dir;
    /** Every product on F32 activations: what a float reference (transformers, the CPU's vector kernels) computes. */
    private static CudaBackend floatCuda;

    @BeforeAll
    static void open() {
        if (backends.probe().usable()) {
            floatCuda = new CudaBackend(backends.library(), backends.device(), true, false);
        }
    }

    @AfterAll
    static void close() {
        if (floatCuda != null) {
            floatCuda.close();
        }
    }

    @Test
    void tinyStoriesF32ReproducesTransformers() throws IOException {
        JsonNode golden = ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json");
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir.resolve("f32")))) {
            LlamaModel model = LlamaModel.load(file, backends.cuda());
            for (JsonNode c : golden.get("cases")) {
                GreedyGolden.of(c).assertReproducedBy(model, LOGIT_TOLERANCE);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama-untied", "llama3-rope-scaling", "qwen2-bias-tied", "mistral-sliding-window",
            "qwen3-qk-norm", "phi3-longrope", "gemma2-softcap-local", "gemma3-local-global"})
    void eachArchitectureReproducesTransformers(String name) throws IOException {
        JsonNode golden = ArchitectureGoldenTest.read("/golden/architectures/" + name + ".json");
        try (ZseFile file = ZseFile.open(ArchitectureGoldenTest.converted(name, golden, GreedyGolden.of(golden), dir))) {
            LlamaModel model = LlamaModel.load(file, backends.cuda());
            for (GreedyGolden run : GreedyGolden.allOf(golden)) {
                run.firstTokens(ARCHITECTURE_TOKENS).assertReproducedBy(model, LOGIT_TOLERANCE);
            }
        }
    }

    /**
     * GGUF files as users have them, imported bit for bit, on CUDA: K-quants (Q4_K and Q6_K of tiny-kquant, rows of
     * 256) and llama-quantize's Q4_K_M fallback for rows of 64 (Q5_0, Q5_1 and Q8_0: a Phi-3 and a Gemma 3) reproduce
     * the dequantizing reference's logits within the CPU import test's tolerance (GgufImportGoldenTest), on F32
     * activations as that reference.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tiny-kquant-q4_k_m", "tiny-kquant-q6_k", "tiny-phi3-q4_k_m", "tiny-gemma3-q4_k_m"})
    void ggufQuantizedFilesReproduceTheirReferenceOnCuda(String name) throws IOException {
        try (ZseFile file = ZseFile.open(imported(name))) {
            LlamaModel model = LlamaModel.load(file, floatCuda);
            for (JsonNode c : ArchitectureGoldenTest.read("/gguf/" + name + ".json").get("cases")) {
                GgufImportGoldenTest.teacherForced(model, GreedyGolden.of(c), 1e-4);
            }
        }
    }

    /**
     * K-quant files on the integer products: every product's activations are int8 on both sides, so the greedy ids
     * are the CPU native kernels'. (The Q4_K_M fallback files mix in Q5, which takes F32 activations here and int8 ones
     * on the CPU: their random weights' near-ties then part ways.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"tiny-kquant-q4_k_m", "tiny-kquant-q6_k"})
    void kQuantFilesOnTheIntegerProductsGiveTheNativeCpuIds(String name) throws IOException {
        assumeTrue(TestKernels.nativeUnavailable().isEmpty(), () -> TestKernels.nativeUnavailable().orElseThrow());
        try (ZseFile file = ZseFile.open(imported(name))) {
            int[] prompt = GreedyGolden.of(ArchitectureGoldenTest.read("/gguf/" + name + ".json").get("cases").get(0))
                    .promptIds();
            assertSameGreedyIds(file, prompt, "native", backends.cuda(), name + " on the integer products");
        }
    }

    private static Path imported(String name) throws IOException {
        Path out = dir.resolve(name + ".zse");
        if (!java.nio.file.Files.exists(out)) {
            io.zse.convert.gguf.GgufConverter.convert(io.zse.convert.gguf.GgufFixtures.gguf(name, dir), out, true,
                    io.zse.convert.ModelConverter.Progress.NONE);
        }
        return out;
    }

    /**
     * BitNet b1.58 (TERNARY projections with BitLinear's int8 activations, relu² gating, sub-norms) against
     * transformers, with BitNetGoldenTest's tolerance: the first ARCHITECTURE_TOKENS greedy ids exactly (the emulation
     * is slow).
     */
    @ParameterizedTest
    @ValueSource(strings = {"bitnet-packed", "bitnet-online"})
    void bitNetReproducesTransformers(String name) throws IOException {
        JsonNode golden = ArchitectureGoldenTest.read("/golden/architectures/" + name + ".json");
        GreedyGolden run = GreedyGolden.of(golden);
        try (ZseFile file = ZseFile.open(BitNetGoldenTest.converted(name, golden, run, dir))) {
            BitNetGoldenTest.assertReproduced(run.firstTokens(ARCHITECTURE_TOKENS), LlamaModel.load(file,
                    backends.cuda()));
        }
    }

    /**
     * Quantized weights: the same greedy ids as the CPU backend on the same file (both decode the same bytes), on F32
     * activations (the CPU's vector kernels) and, for the integer products' types, on int8 ones (its native kernels).
     */
    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"F16", "BF16", "Q8", "Q4", "NF4"})
    void quantizedTinyStoriesGreedyIdsAreTheCpuIds(TensorType type) throws IOException {
        int[] prompt = LlamaModelGoldenTest.ints(ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json")
                .get("cases").get(0).get("prompt_ids"));
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, dir.resolve(type.name())))) {
            assertSameGreedyIds(file, prompt, "vector", floatCuda, type + " greedy ids on F32 activations");
            if (type == TensorType.Q8 || type == TensorType.Q4) {
                assumeTrue(TestKernels.nativeUnavailable().isEmpty(),
                        () -> TestKernels.nativeUnavailable().orElseThrow());
                assertSameGreedyIds(file, prompt, "native", backends.cuda(), type + " greedy ids on int8 activations");
            }
        }
    }

    private static void assertSameGreedyIds(ZseFile file, int[] prompt, String cpuKernels, CudaBackend onCuda,
                                            String what) {
        try (CpuBackend cpu = new CpuBackend(2, TestKernels.named(cpuKernels))) {
            int[] expected = LlamaModelGoldenTest.greedy(LlamaModel.load(file, cpu), prompt, QUANTIZED_TOKENS,
                    new ArrayList<>());
            int[] actual = LlamaModelGoldenTest.greedy(LlamaModel.load(file, onCuda), prompt, QUANTIZED_TOKENS,
                    new ArrayList<>());
            assertArrayEquals(expected, actual, what);
        }
    }

    /**
     * A prompt of 24 tokens (the four golden prompts in a row) is one prefill chunk: the tensor-core matmul (n > 8)
     * and the tiled paged attention, F32, F16 and INT8 caches (F16: its products on tensor cores too; INT8: rows
     * quantized on the device as the CPU quantizes them). Greedy ids as the CPU backend's (vector kernels) with the
     * same cache type, on F32 activations throughout.
     */
    @ParameterizedTest
    @CsvSource({"F16,F32", "BF16,F16", "Q8,F32", "Q4,F16", "NF4,F32", "F16,INT8", "Q8,INT8"})
    void longPromptsThroughThePrefillKernelsGiveTheCpuGreedyIds(TensorType type, KvCacheType kvType) throws IOException {
        int[] prompt = new int[0];
        for (JsonNode c : ArchitectureGoldenTest.read("/golden/tinystories-656k-greedy-f32.json").get("cases")) {
            int[] ids = LlamaModelGoldenTest.ints(c.get("prompt_ids"));
            int at = prompt.length;
            prompt = Arrays.copyOf(prompt, at + ids.length);
            System.arraycopy(ids, 0, prompt, at, ids.length);
        }
        assertTrue(prompt.length > 16, "a prompt longer than a tile and than the vector kernel's batch");
        // Its own folder: the class's other tests convert the same types into the shared temporary folder.
        Path converted = dir.resolve("long-prompt").resolve(type + "-" + kvType);
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(type, converted));
             CpuBackend cpu = new CpuBackend(2, TestKernels.named("vector"))) {
            int[] expected = LlamaModelGoldenTest.greedy(LlamaModel.load(file, cpu), prompt, QUANTIZED_TOKENS,
                    new ArrayList<>(), kvType);
            int[] actual = LlamaModelGoldenTest.greedy(LlamaModel.load(file, floatCuda), prompt, QUANTIZED_TOKENS,
                    new ArrayList<>(), kvType);
            assertArrayEquals(expected, actual, type + " with a " + kvType + " cache: greedy ids");
        }
    }
}
