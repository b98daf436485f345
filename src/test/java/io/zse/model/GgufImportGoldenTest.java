package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.KvCache;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.convert.ModelConverter;
import io.zse.convert.gguf.GgufConverter;
import io.zse.convert.gguf.GgmlBlockDecoder;
import io.zse.convert.gguf.GgmlType;
import io.zse.convert.gguf.GgufFile;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GGUF files written by llama.cpp's convert_hf_to_gguf.py and llama-quantize, imported with {@link GgufConverter} and
 * run on the CPU backend: F32 and F16 must be the safetensors import byte for byte (so the same greedy ids);
 * quantized files are compared with transformers running the same GGUF dequantized to float32.
 */
class GgufImportGoldenTest {
    @TempDir
    static Path dir;
    static final CpuBackend BACKEND = TestKernels.backend("vector", 2);

    @AfterAll
    static void close() {
        BACKEND.close();
    }

    static ModelConverter.Result convert(String name, Path out) throws IOException {
        return GgufConverter.convert(GgufFixtures.gguf(name, dir), out, true, ModelConverter.Progress.NONE);
    }

    static JsonNode json(String resource) throws IOException {
        try (InputStream in = GgufImportGoldenTest.class.getResourceAsStream(resource)) {
            return new ObjectMapper().readTree(in);
        }
    }

    @ParameterizedTest
    @CsvSource({"tinystories-656k-f32, F32", "tinystories-656k-f16, F16"})
    void unquantizedFilesAreTheSafetensorsImportByteForByte(String name, TensorType type) throws IOException {
        Path fromGguf = dir.resolve(name + ".zse");
        ModelConverter.Result result = convert(name, fromGguf);
        assertEquals(type == TensorType.F32 ? List.of("F32 -> F32 (exact): 20 tensors")
                : List.of("F16 -> F16 (exact): 15 tensors", "F32 -> F32 (exact): 5 tensors"), result.notes());
        Path fromSafetensors = TestModels.convertTinyStories(type, dir);
        try (ZseFile gguf = ZseFile.open(fromGguf); ZseFile hf = ZseFile.open(fromSafetensors)) {
            // llama.cpp records a padding id (0, <unk>) that config.json leaves unset; everything else is the same.
            assertEquals(hf.configJson(), gguf.configJson().replace("\"pad_token_id\" : 0", "\"pad_token_id\" : null"));
            assertEquals(hf.tensors().size(), gguf.tensors().size());
            for (TensorInfo t : hf.tensors()) {
                TensorInfo mine = gguf.tensor(t.name()).info();
                assertEquals(t.type(), mine.type(), t.name());
                assertEquals(t.dataCrc(), mine.dataCrc(), t.name() + " differs from the safetensors import");
            }
            LlamaModel model = LlamaModel.load(gguf, BACKEND);
            for (JsonNode c : json("/golden/tinystories-656k-greedy-f32.json").get("cases")) {
                GreedyGolden golden = GreedyGolden.of(c);
                List<float[]> steps = new java.util.ArrayList<>();
                int[] ids = LlamaModelGoldenTest.greedy(model, golden.promptIds(), golden.greedyIds().length, steps);
                if (type == TensorType.F32) {
                    golden.assertReproducedBy(model, 1e-4);
                } else {
                    int[] reference = LlamaModelGoldenTest.greedy(LlamaModel.load(hf, BACKEND), golden.promptIds(),
                            golden.greedyIds().length, new java.util.ArrayList<>());
                    org.junit.jupiter.api.Assertions.assertArrayEquals(reference, ids, golden.prompt());
                }
            }
        }
    }

    /**
     * Bit-exact types (Q8_0 as Q8, Q4_0 as Q4, the K-quants as the .zse types of the same names) hold the values
     * transformers dequantizes, so logits agree to float32 rounding. tiny-llama-untied-* and tiny-qwen2-bias-tied-* are
     * tiny_models.py's weights through llama.cpp's converter and llama-quantize (tiny_gguf_quant_fixtures.py); their
     * rows of 64 make llama-quantize's Q4_K_M fall back to Q5_0 and Q8_0, both carried exactly (Q5_0 as Q5).
     * tiny-llama3-rope-scaling-* hold llama3 RoPE factors (rope_freqs.weight), which transformers' GGUF loader drops:
     * their reference runs the file's dequantized weights in the checkpoint's architecture.
     * tiny-mistral-sliding-window-* hold no window (llama.cpp writes Mistral as a Llama without one), and neither does
     * their reference. tiny-{gemma2,phi3,qwen3,gemma3}-* are the F32 fixtures below through llama-quantize
     * (arch_gguf_quant_fixtures.py); their reference runs the file's dequantized tensors in the checkpoint's own
     * architecture, as transformers' GGUF loader misreads these. Phi-3's LongRoPE attention factor is applied by the
     * engine, so its q and k rows keep their bits too (folded into F16 rows, it cost 1.7e-4 of a logit).
     */
    @ParameterizedTest
    @CsvSource({"tinystories-656k-q8_0, 1e-4, Q8_0 -> Q8 (exact): 15 tensors",
            "tinystories-656k-q4_0, 1e-4, Q4_0 -> Q4 (exact): 14 tensors",
            "tiny-kquant-q4_k_m, 1e-4, Q4_K -> Q4_K (exact): 5 tensors",
            "tiny-kquant-q6_k, 1e-4, Q6_K -> Q6_K (exact): 8 tensors",
            "tiny-llama-untied-f16, 1e-4, F16 -> F16 (exact): 16 tensors",
            "tiny-llama-untied-q8_0, 1e-4, Q8_0 -> Q8 (exact): 16 tensors",
            "tiny-llama-untied-q4_0, 1e-4, Q4_0 -> Q4 (exact): 15 tensors",
            "tiny-llama-untied-q4_k_m, 1e-4, Q8_0 -> Q8 (exact): 3 tensors",
            "tiny-qwen2-bias-tied-f16, 1e-4, F16 -> F16 (exact): 15 tensors",
            "tiny-qwen2-bias-tied-q8_0, 1e-4, Q8_0 -> Q8 (exact): 15 tensors",
            "tiny-qwen2-bias-tied-q4_0, 1e-4, Q4_0 -> Q4 (exact): 14 tensors",
            "tiny-qwen2-bias-tied-q4_k_m, 1e-4, Q8_0 -> Q8 (exact): 3 tensors",
            "tiny-llama3-rope-scaling-f16, 1e-4, F16 -> F16 (exact): 15 tensors",
            "tiny-llama3-rope-scaling-q8_0, 1e-4, Q8_0 -> Q8 (exact): 15 tensors",
            "tiny-llama3-rope-scaling-q4_0, 1e-4, Q4_0 -> Q4 (exact): 14 tensors",
            "tiny-llama3-rope-scaling-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 12 tensors",
            "tiny-mistral-sliding-window-f16, 1e-4, F16 -> F16 (exact): 16 tensors",
            "tiny-mistral-sliding-window-q8_0, 1e-4, Q8_0 -> Q8 (exact): 16 tensors",
            "tiny-mistral-sliding-window-q4_0, 1e-4, Q4_0 -> Q4 (exact): 15 tensors",
            "tiny-mistral-sliding-window-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 13 tensors",
            "tiny-gemma2-f16, 1e-4, F16 -> F16 (exact): 22 tensors",
            "tiny-gemma2-q8_0, 1e-4, Q8_0 -> Q8 (exact): 22 tensors",
            "tiny-gemma2-q4_0, 1e-4, Q4_0 -> Q4 (exact): 21 tensors",
            "tiny-gemma2-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 19 tensors",
            "tiny-phi3-f16, 1e-4, F16 -> F16 (exact): 16 tensors",
            "tiny-phi3-q8_0, 1e-4, Q8_0 -> Q8 (exact): 16 tensors",
            "tiny-phi3-q4_0, 1e-4, Q4_0 -> Q4 (exact): 15 tensors",
            "tiny-phi3-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 8 tensors",
            "tiny-qwen3-f16, 1e-4, F16 -> F16 (exact): 15 tensors",
            "tiny-qwen3-q8_0, 1e-4, Q8_0 -> Q8 (exact): 15 tensors",
            "tiny-qwen3-q4_0, 1e-4, Q4_0 -> Q4 (exact): 14 tensors",
            "tiny-qwen3-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 12 tensors",
            "tiny-gemma3-f16, 1e-4, F16 -> F16 (exact): 29 tensors",
            "tiny-gemma3-q8_0, 1e-4, Q8_0 -> Q8 (exact): 29 tensors",
            "tiny-gemma3-q4_0, 1e-4, Q4_0 -> Q4 (exact): 28 tensors",
            "tiny-gemma3-q4_k_m, 1e-4, Q5_0 -> Q5 (exact): 24 tensors"})
    void quantizedFilesMatchTransformersDequantizingTheSameGguf(String name, double tolerance, String note)
            throws IOException {
        Path out = dir.resolve(name + ".zse");
        ModelConverter.Result result = convert(name, out);
        System.out.println(name + ": " + result.notes());
        assertTrue(result.notes().stream().anyMatch(n -> n.startsWith(note)), result.notes().toString());
        assertTrue(result.notes().stream().allMatch(n -> n.contains("(exact)")), result.notes().toString());
        try (ZseFile file = ZseFile.open(out)) {
            LlamaModel model = LlamaModel.load(file, BACKEND);
            double maxDiff = 0;
            for (JsonNode c : json("/gguf/" + name + ".json").get("cases")) {
                maxDiff = Math.max(maxDiff, teacherForced(model, GreedyGolden.of(c), tolerance));
            }
            System.out.printf("%s: max |logit - transformers(gguf)| = %.2e%n", name, maxDiff);
        }
    }

    /**
     * Runs the reference's greedy ids through the model (so one near tie cannot derail the rest) and compares the
     * recorded top-5 logits; greedy ids must agree wherever the reference's top-1 margin exceeds twice the tolerance.
     */
    static double teacherForced(LlamaModel model, GreedyGolden golden, double tolerance) {
        int[] prompt = golden.promptIds();
        int[] ids = golden.greedyIds();
        KvCache cache = model.newCache(prompt.length + ids.length);
        float[] logits = model.forward(prompt, 0, cache);
        double maxDiff = 0;
        for (int step = 0; step < ids.length; step++) {
            int position = prompt.length - 1 + step;
            for (GreedyGolden.TopLogits top : golden.logits()) {
                if (top.position() == position) {
                    for (int r = 0; r < top.ids().length; r++) {
                        double want = top.values()[r];
                        double got = logits[top.ids()[r]];
                        maxDiff = Math.max(maxDiff, Math.abs(got - want));
                        assertTrue(Math.abs(got - want) <= tolerance * Math.max(1, Math.abs(want)),
                                "logit of " + top.ids()[r] + " at position " + position + ": " + got + " vs " + want);
                    }
                    if (top.values()[0] - top.values()[1] > 2 * tolerance * Math.max(1, Math.abs(top.values()[0]))) {
                        assertEquals(ids[step], LlamaModelGoldenTest.argmax(logits), "greedy id at step " + step);
                    }
                }
            }
            logits = model.forward(new int[]{ids[step]}, prompt.length + step, cache);
        }
        return maxDiff;
    }

    /**
     * Gemma 2 as llama.cpp's convert_hf_to_gguf.py writes it (tools/reference/gemma_gguf_fixtures.py): its norm weights
     * already hold 1 + w, its post-norms and pre-feed-forward norm have their own names, and soft caps, window and
     * local layers come from its keys. The F32 import must equal the safetensors import of the same formula weights
     * tensor for tensor, in config, and in greedy ids (through local and global layers past the window of 8).
     */
    @Test
    void gemma2FromLlamaCppIsTheSafetensorsImport() throws IOException {
        ModelConfig mine = assertSafetensorsImport("tiny-gemma2-f32", 35);
        assertEquals(List.of(true, false, true), mine.gemma().slidingLayers());
        assertEquals(3.0, mine.gemma().attentionSoftCap());
    }

    /**
     * Phi-3 with LongRoPE as llama.cpp's convert_hf_to_gguf.py writes it (tools/reference/phi3_gguf_fixtures.py): fused
     * attn_qkv and ffn_up (gate then up), both factor sets as rope_factors_short/long tensors, the original context and
     * attention factor in phi3.rope.scaling.* keys, and sliding_window 0 for none. The import must split the fused
     * rows exactly as the safetensors import does (same CRCs; the attention factor 1.5 is the engine's to apply), and
     * the greedy ids must match past the original context of 16 (long factors).
     */
    @Test
    void phi3FromLlamaCppIsTheSafetensorsImport() throws IOException {
        ModelConfig mine = assertSafetensorsImport("tiny-phi3-f32", 21);
        assertEquals("phi3", mine.architecture());
        assertEquals(null, mine.slidingWindow());
        io.zse.model.RopeScaling rope = mine.ropeScaling();
        assertEquals("longrope", rope.type());
        assertEquals(1.5, rope.factor());
        assertEquals(16, rope.originalContextLength());
        assertEquals(List.of(1.0, 1.3, 1.9, 3.2, 5.5, 9.0, 14.0, 21.0), rope.longFactors());
    }

    /**
     * Qwen3 as llama.cpp names it (tools/reference/gguf_writer_fixtures.py: llama.cpp c392e50 has no Qwen3 converter,
     * so gguf-py's GGUFWriter writes it): per-head attn_q_norm/attn_k_norm, no biases, head_dim 32 from key_length
     * (heads x head_dim != hidden), no Q/K row permutation. Must equal the safetensors import tensor for tensor.
     */
    @Test
    void qwen3FromGgufIsTheSafetensorsImport() throws IOException {
        ModelConfig mine = assertSafetensorsImport("tiny-qwen3-f32", 24);
        assertEquals("qwen3", mine.architecture());
        assertEquals(32, mine.headDim());
        assertEquals(false, mine.attentionBias());
    }

    /**
     * Gemma 3 as llama.cpp names it (tools/reference/gguf_writer_fixtures.py): every norm, the q/k norms included,
     * stored as 1 + w; local layers from sliding_window_pattern flags, their RoPE base from rope.freq_base_swa, linear
     * scaling 4 of the global base. Greedy ids run past the window of 12 through local and global layers.
     */
    @Test
    void gemma3FromGgufIsTheSafetensorsImport() throws IOException {
        ModelConfig mine = assertSafetensorsImport("tiny-gemma3-f32", 54);
        assertEquals("gemma3", mine.architecture());
        assertEquals(List.of(true, true, false, true), mine.gemma().slidingLayers());
        assertEquals(12, mine.slidingWindow());
    }

    /**
     * Imports fixture {@code name} (an F32 GGUF of formula weights, tools/reference/*_gguf_fixtures.py) and the
     * safetensors checkpoint of the same config and weights; asserts equal configs, every tensor's type and CRC, the
     * tokenizer, and 32 greedy ids. Returns the config.
     */
    private static ModelConfig assertSafetensorsImport(String name, int tensors) throws IOException {
        JsonNode fixture = json("/gguf/" + name + ".json");
        Path fromGguf = dir.resolve(name + "-gguf.zse");
        ModelConverter.Result result = convert(name, fromGguf);
        assertEquals(List.of("F32 -> F32 (exact): " + tensors + " tensors"), result.notes());
        byte[] tokenizer = java.nio.file.Files.readAllBytes(
                Path.of("src/test/resources/models/tinystories-656k/tokenizer.json"));
        Path hf = FormulaCheckpoint.write(fixture.get("config"), fixture.get("weights").get("seed").asLong(), tokenizer,
                dir.resolve(name + "-hf"));
        Path fromSafetensors = TestModels.convert(hf, io.zse.convert.ConvertOptions.of(TensorType.F32),
                dir.resolve(name + "-hf.zse"));
        try (ZseFile gguf = ZseFile.open(fromGguf); ZseFile safetensors = ZseFile.open(fromSafetensors)) {
            ModelConfig mine = ModelConfig.fromJson(gguf.configJson());
            assertEquals(ModelConfig.fromJson(safetensors.configJson()), mine);
            assertEquals(safetensors.tensors().size(), gguf.tensors().size());
            for (TensorInfo t : safetensors.tensors()) {
                TensorInfo fromLlamaCpp = gguf.tensor(t.name()).info();
                assertEquals(t.type(), fromLlamaCpp.type(), t.name());
                assertEquals(t.dataCrc(), fromLlamaCpp.dataCrc(), t.name() + " differs from the safetensors import");
            }
            int[] prompt = io.zse.tokenizer.TokenizerSource.fromZse(safetensors).encode("Once upon a time, a little", true);
            org.junit.jupiter.api.Assertions.assertArrayEquals(prompt,
                    io.zse.tokenizer.TokenizerSource.fromZse(gguf).encode("Once upon a time, a little", true));
            int[] expected = LlamaModelGoldenTest.greedy(LlamaModel.load(safetensors, BACKEND), prompt, 32,
                    new java.util.ArrayList<>());
            int[] actual = LlamaModelGoldenTest.greedy(LlamaModel.load(gguf, BACKEND), prompt, 32,
                    new java.util.ArrayList<>());
            org.junit.jupiter.api.Assertions.assertArrayEquals(expected, actual, "greedy ids");
            return mine;
        }
    }

    @Test
    void q4KeepsGgufQ4ZeroValuesExactly() throws IOException {
        // Q4_0's (q - 8) d becomes Q4's q d + m with m = -8 d: the decoded rows equal ggml's exactly (code 8 gives
        // +0 here where ggml may give -0).
        Path gguf = GgufFixtures.gguf("tinystories-656k-q4_0", dir);
        Path out = dir.resolve("q4_0-exact.zse");
        GgufConverter.convert(gguf, out, true, ModelConverter.Progress.NONE);
        try (ZseFile file = ZseFile.open(out); GgufFile g = GgufFile.open(gguf)) {
            float[] ours = new float[384];
            float[] theirs = new float[384];
            var t = file.tensor("model.layers.1.mlp.down_proj.weight");
            GgufFile.GgufTensor source = g.tensors().stream().filter(x -> x.name().equals("blk.1.ffn_down.weight"))
                    .findFirst().orElseThrow();
            assertEquals(GgmlType.Q4_0, source.type());
            for (int row = 0; row < 128; row += 37) {
                io.zse.format.TensorDecoder.decode(t.info().type(), t.info().groupSize(), t.data(), t.scales(),
                        (long) row * 384, 384, ours, 0);
                GgmlBlockDecoder.decode(source.type(), g.bytes(source), (long) row * 384, 384, theirs, 0);
                for (int i = 0; i < ours.length; i++) {
                    assertTrue(ours[i] == theirs[i], "row " + row + " element " + i + ": " + ours[i] + " vs " + theirs[i]);
                }
            }
        }
    }
}
