package io.zse.generate;

import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.TokenizerSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real TinyStories-656K over the sampled story text (eval/tinystories-sampled.txt, ~2970 tokens, made by
 * tools/eval/story-text.sh): the F32 model against itself, against its Q8 conversion and with a quantized KV cache.
 */
class QualityComparisonTest {
    @TempDir
    static Path dir;
    static CpuBackend backend;
    static ZseFile f32File;
    static QualityComparison.Side reference;
    static int[] text;

    @BeforeAll
    static void load() throws IOException {
        // Float activations: these bounds are the weight formats' own; what the native kernels' int8 activations
        // add is EvalCommandTest's (docs/quality.md, "Int8 activations").
        backend = new CpuBackend(2, TestKernels.named("vector"));
        f32File = ZseFile.open(TestModels.convertTinyStories(TensorType.F32, dir));
        reference = new QualityComparison.Side(LlamaModel.load(f32File, backend), KvCacheType.F32);
        try (InputStream in = QualityComparisonTest.class.getResourceAsStream("/eval/tinystories-sampled.txt")) {
            text = TokenizerSource.fromZse(f32File).encode(new String(in.readAllBytes(), StandardCharsets.UTF_8), true);
        }
    }

    @AfterAll
    static void close() {
        f32File.close();
        backend.close();
    }

    @Test
    void aModelComparedWithItselfHasNoDivergence() {
        QualityComparison.Report r = QualityComparison.compare(reference, reference, text, Integer.MAX_VALUE);
        assertTrue(text.length >= 2500, "fixture of " + text.length + " tokens");
        assertEquals(text.length - 1, r.tokens());
        assertEquals(6, r.windows()); // 512-token windows sharing one token: ceil(2973 / 511)
        // Not exactly 0: two runs of one model may differ in the last bits of a logit (the order of a float lane
        // reduction is unspecified, and need not be the same before and after C2 compiles it): CI runs saw a mean KL
        // of 1.2e-15 and perplexities 4e-9 apart (relative), float rounding carried through a mean of logs.
        assertEquals(0.0, r.meanKl(), 1e-12);
        assertEquals(0.0, r.maxKl(), 1e-10);
        assertEquals(1.0, r.top1Agreement());
        assertEquals(r.referencePerplexity(), r.modelPerplexity(), 1e-6 * r.referencePerplexity());
        // Text the model sampled itself is likely under it: far below the 2048 of a uniform guess.
        assertTrue(r.referencePerplexity() > 1 && r.referencePerplexity() < 100, "perplexity " + r.referencePerplexity());
    }

    /**
     * Q8 weights cost little: mean KL below 1e-3 nats and top-1 agreement of at least 98 %. The issue asks for 99 %;
     * this model does not reach it with any 8-bit round-to-nearest weights (see docs/quality.md): its distributions on
     * sampled text are flat (mean top-1 probability 0.32, 1.5 % of positions within 0.001 of a tie), and the Q8 kernel
     * itself is exact (Q8 against the same weights dequantized to F32: KL 0, 100 %).
     */
    @Test
    void q8WeightsStayCloseToF32() throws IOException {
        try (ZseFile q8File = ZseFile.open(TestModels.convertTinyStories(TensorType.Q8, dir))) {
            QualityComparison.Report r = QualityComparison.compare(reference,
                    new QualityComparison.Side(LlamaModel.load(q8File, backend), KvCacheType.F32), text,
                    Integer.MAX_VALUE);
            assertTrue(r.top1Agreement() >= 0.98, "Q8 top-1 agreement " + r.top1Agreement());
            assertTrue(r.meanKl() > 0 && r.meanKl() < 1e-3, "Q8 mean KL " + r.meanKl());
            assertTrue(Math.abs(r.modelPerplexity() / r.referencePerplexity() - 1) < 0.01, r.toString());
        }
    }

    @Test
    void quantizedKvCachesCostLessThanQ8Weights() {
        QualityComparison.Report f16 = QualityComparison.compare(reference,
                new QualityComparison.Side(reference.model(), KvCacheType.F16), text, 1000);
        QualityComparison.Report int8 = QualityComparison.compare(reference,
                new QualityComparison.Side(reference.model(), KvCacheType.INT8), text, 1000);
        assertEquals(1000, int8.tokens());
        assertTrue(f16.meanKl() > 0 && f16.meanKl() < 1e-5, f16.toString());
        assertTrue(int8.meanKl() > f16.meanKl() && int8.meanKl() < 5e-4, int8.toString());
        assertTrue(f16.top1Agreement() >= 0.995 && int8.top1Agreement() >= 0.98, f16 + " " + int8);
    }

    @Test
    void badInputIsRefusedClearly() {
        assertEquals("the text has 1 tokens: at least 2 are needed", assertThrows(IllegalArgumentException.class,
                () -> QualityComparison.compare(reference, reference, new int[]{1}, 10)).getMessage());
        int[] outside = Arrays.copyOf(text, 20);
        outside[5] = 5000;
        assertEquals("token id 5000 outside the vocabulary 0..2047", assertThrows(IllegalArgumentException.class,
                () -> QualityComparison.compare(reference, reference, outside, 10)).getMessage());
    }

    @Test
    void klDivergenceOfKnownDistributions() {
        double[] p = {Math.log(0.5), Math.log(0.5)};
        double[] q = {Math.log(0.25), Math.log(0.75)};
        assertEquals(0.5 * Math.log(2) + 0.5 * Math.log(0.5 / 0.75), QualityComparison.klDivergence(p, q), 1e-12);
        double[] logits = QualityComparison.logSoftmax(new float[]{9, 1, 2, 3}, 1, 3);
        assertEquals(1.0, Arrays.stream(logits).map(Math::exp).sum(), 1e-12);
        assertEquals(1.0, logits[2] - logits[1], 1e-12);
    }
}
