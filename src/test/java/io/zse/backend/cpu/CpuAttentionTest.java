package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.BackendArrays;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Attention over each KV cache type against a plain double-precision attention over the F32 inputs: F32 to rounding,
 * F16 and INT8 within the error their storage allows. Shapes include grouped-query heads, a sliding window, a batch of
 * queries after earlier positions, head widths that are not a multiple of the vector length, and Gemma 2's scale and
 * soft cap. Every kernel family (the native one where libzse_cpu loads).
 */
class CpuAttentionTest {
    private static final Map<String, CpuBackend> BACKENDS = new ConcurrentHashMap<>();

    @AfterAll
    static void stop() {
        BACKENDS.values().forEach(CpuBackend::close);
    }

    static CpuBackend backend(String kernels) {
        return BACKENDS.computeIfAbsent(kernels, k -> TestKernels.backend(k, 2));
    }

    /** Relative error (L2) of attention over a cache of {@code type} against the exact result. */
    private static double relativeError(CpuBackend backend, KvCacheType type, AttentionShape shape, int startPos, int n,
                                        long seed) {
        Random random = new Random(seed);
        int positions = startPos + n;
        float[] q = gaussian(random, n * shape.queryDim(), 2);
        float[] k = gaussian(random, positions * shape.kvDim(), 2);
        float[] v = gaussian(random, positions * shape.kvDim(), 1);
        KvCache cache = new KvCache(type, 1, positions, shape.numKvHeads(), shape.headDim());
        cache.store(0, 0, positions, k, v);
        cache.setLength(positions);
        float[] out = BackendArrays.attention(backend, q, BatchLayout.single(cache, startPos, n), 0, shape);
        double[] expected = exactAttention(q, n, startPos, k, v, shape);
        double diff = 0;
        double norm = 0;
        for (int i = 0; i < out.length; i++) {
            diff += (out[i] - expected[i]) * (out[i] - expected[i]);
            norm += expected[i] * expected[i];
        }
        return Math.sqrt(diff / norm);
    }

    private static float[] gaussian(Random random, int length, double sigma) {
        float[] x = new float[length];
        for (int i = 0; i < length; i++) {
            x[i] = (float) (random.nextGaussian() * sigma);
        }
        return x;
    }

    private static double[] exactAttention(float[] q, int n, int startPos, float[] k, float[] v, AttentionShape s) {
        double[] out = new double[n * s.queryDim()];
        int group = s.numHeads() / s.numKvHeads();
        for (int i = 0; i < n; i++) {
            int position = startPos + i;
            for (int head = 0; head < s.numHeads(); head++) {
                int qBase = i * s.queryDim() + head * s.headDim();
                int kvBase = (head / group) * s.headDim();
                int first = s.firstVisible(position);
                double[] p = new double[position + 1];
                double max = Double.NEGATIVE_INFINITY;
                for (int t = first; t <= position; t++) {
                    double dot = 0;
                    for (int j = 0; j < s.headDim(); j++) {
                        dot += (double) q[qBase + j] * k[t * s.kvDim() + kvBase + j];
                    }
                    p[t] = dot * s.scale();
                    if (s.softCap() > 0) {
                        p[t] = s.softCap() * Math.tanh(p[t] / s.softCap());
                    }
                    max = Math.max(max, p[t]);
                }
                double sum = 0;
                for (int t = first; t <= position; t++) {
                    p[t] = Math.exp(p[t] - max);
                    sum += p[t];
                }
                for (int t = first; t <= position; t++) {
                    for (int j = 0; j < s.headDim(); j++) {
                        out[qBase + j] += p[t] / sum * v[t * s.kvDim() + kvBase + j];
                    }
                }
            }
        }
        return out;
    }

    private static final AttentionShape[] SHAPES = {
        new AttentionShape(8, 4, 16, 0),  // TinyStories
        new AttentionShape(4, 1, 64, 0),  // multi-query, Llama-sized heads
        new AttentionShape(6, 2, 12, 5),  // head width not a multiple of the lanes, sliding window
        new AttentionShape(2, 2, 7, 0),   // narrower than one vector
        new AttentionShape(4, 2, 32, 0, 0.125f, 3f), // Gemma 2: its own scale, logits soft-capped
    };

    @ParameterizedTest
    @ValueSource(strings = {"native", "vector", "scalar"})
    void everyTypeStaysCloseToExactAttention(String kernels) {
        assumeTrue(!kernels.equals("native") || TestKernels.nativeUnavailable().isEmpty(), "no libzse_cpu here");
        CpuBackend backend = backend(kernels);
        long seed = 0;
        for (AttentionShape shape : SHAPES) {
            for (int[] run : new int[][]{{0, 9}, {20, 1}, {13, 6}}) {
                seed++;
                double f32 = relativeError(backend, KvCacheType.F32, shape, run[0], run[1], seed);
                double f16 = relativeError(backend, KvCacheType.F16, shape, run[0], run[1], seed);
                double int8 = relativeError(backend, KvCacheType.INT8, shape, run[0], run[1], seed);
                String where = shape + " start " + run[0] + " n " + run[1] + ": f32 " + f32 + " f16 " + f16 + " int8 " + int8;
                assertTrue(f32 < 1e-5, where);
                assertTrue(f16 < 1.5e-3, where); // 2^-11 per element, scores amplified by |q|·|k| / sqrt(d)
                assertTrue(int8 < 3e-2, where);  // absmax/254 per element on Gaussian rows
                assertTrue(f16 < int8, where);
            }
        }
    }

    /**
     * An INT8 cache's scales are one a kv head: an attention whose heads split the cache's width another way (4 of 32
     * against the cache's 2 of 64) is refused before a kernel reads past them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "vector", "scalar"})
    void int8HeadsThatSplitTheCachesWidthAnotherWayAreRefused(String kernels) {
        assumeTrue(!kernels.equals("native") || TestKernels.nativeUnavailable().isEmpty(), "no libzse_cpu here");
        KvCache cache = new KvCache(KvCacheType.INT8, 1, 4, 2, 64);
        float[] rows = new float[4 * 128];
        cache.store(0, 0, 4, rows, rows);
        cache.setLength(4);
        AttentionShape fourOf32 = new AttentionShape(8, 4, 32, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BackendArrays.attention(
                backend(kernels), new float[fourOf32.queryDim()], BatchLayout.single(cache, 3, 1), 0, fourOf32));
        assertTrue(e.getMessage().contains("4 kv heads, kv dim 128, differ from the cache's 2"), e.getMessage());
    }
}
