package io.zse.backend.cuda;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ConvertOptions;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SyntheticCheckpointWriter;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.generate.Sampler;
import io.zse.model.LlamaModel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;

import static io.zse.backend.cuda.CudaBackendParityTest.assertClose;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A prompt of more than 64 tokens through a whole model whose widths are whole stages of 256 columns (a synthetic
 * Llama of TinyStories' layout with hidden 256 and ff 768): every product of its layers runs as a staged int8
 * tensor-core product in tiles of 64 tokens. The logits of the prompt's last position are those of the same prompt
 * fed in chunks of 50 tokens (products of 50 rows, which CudaBackendParityTest checks against the CPU's int8 product),
 * and for Q8 those of the CPU's native kernels, which take the activations in int8 as well (their Q4 kernel sums a
 * group's minimum term otherwise). ZSE_CUDA_PROMPT_PRODUCTS=f16 takes the F16 tiles instead.
 */
class CudaPromptProductsTest {
    @RegisterExtension
    static final CudaTestBackends backends = CudaTestBackends.libraryOnly();

    private static final int PROMPT = 150; // tiles of 64, 64 and 22 tokens
    private static final int CHUNK = 50;
    @TempDir
    static Path dir;
    private static Path checkpoint;

    @BeforeAll
    static void open() throws IOException {
        @SuppressWarnings("unchecked")
        Map<String, Object> config = new ObjectMapper().readValue(
                TestModels.tinyStories().resolve("config.json").toFile(), Map.class);
        config.put("hidden_size", 256);
        config.put("intermediate_size", 768);
        config.put("num_attention_heads", 4);
        config.put("num_key_value_heads", 2);
        checkpoint = Files.createDirectories(dir.resolve("wide"));
        new SyntheticCheckpointWriter(config, SafetensorsDtype.F32, 11, 1, TestModels.tinyStories(),
                new PrintStream(OutputStream.nullOutputStream())).write(checkpoint);
    }

    @BeforeEach
    void requireNativeKernels() {
        assumeTrue(TestKernels.nativeUnavailable().isEmpty(), "no native CPU kernels");
    }

    @ParameterizedTest
    @EnumSource(value = TensorType.class, names = {"Q4", "Q8"})
    void aLongPromptTakesTheStagedProductsAndGivesTheChunkedLogits(TensorType type) throws IOException {
        Path zse = TestModels.convert(checkpoint, ConvertOptions.of(type), dir.resolve(type + ".zse"));
        int[] prompt = new Random(5).ints(PROMPT, 3, 2048).toArray();
        try (ZseFile file = ZseFile.open(zse);
             CudaBackend int8 = backend(true);
             CudaBackend f16 = backend(false);
             CpuBackend cpu = TestKernels.backend("native", 2)) {
            LlamaModel onGpu = LlamaModel.load(file, int8);
            float[] chunked = lastLogits(onGpu, prompt, CHUNK);
            long before = int8.stagedLaunches();
            float[] whole = lastLogits(onGpu, prompt, PROMPT);
            // per layer q/k/v, o, gate/up and down; the output layer takes the last position only
            assertEquals(before + 2 * 4, int8.stagedLaunches(), "staged launches of the whole prompt");
            assertClose(chunked, whole, 1e-5, type + ": whole prompt against chunks");
            assertEquals(Sampler.argmax(chunked), Sampler.argmax(whole), type + ": the greedy id");
            if (type == TensorType.Q8) {
                assertClose(lastLogits(LlamaModel.load(file, cpu), prompt, PROMPT), whole, 1e-4,
                        "Q8: against the CPU's native kernels");
            }
            float[] tiles = lastLogits(LlamaModel.load(file, f16), prompt, PROMPT);
            assertEquals(0, f16.stagedLaunches(), "the F16 tiles' run");
            assertClose(chunked, tiles, 5e-2, type + ": F16 tiles");
        }
    }

    private static CudaBackend backend(boolean int8Prompts) {
        return new CudaBackend(backends.library(), backends.device(), false, true, null,
                new IntegerProducts.Variants(0, 0, 0, true,
                IntegerProducts.NormPlacement.PRODUCER, true, int8Prompts, 0));
    }

    /** The last position's logits of {@code prompt} fed in chunks of {@code chunk} tokens into a new cache. */
    private static float[] lastLogits(LlamaModel model, int[] prompt, int chunk) {
        KvCache cache = model.newCache(PROMPT + 8);
        float[] logits = null;
        for (int at = 0; at < prompt.length; at += chunk) {
            logits = model.forward(Arrays.copyOfRange(prompt, at, Math.min(prompt.length, at + chunk)), at, cache);
        }
        return logits;
    }
}
