package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.KvCache;
import io.zse.backend.KvRows;

import java.util.Arrays;

/**
 * Scaled dot-product attention over a {@link KvCache} of any storage type, one (query row, head) pair per work item;
 * the {@link KvRowProducts} of the chosen kernels read the stored keys and values in place.
 */
final class CpuAttention {
    private CpuAttention() {
    }

    /** See {@link io.zse.backend.Backend#attention}. */
    static void attend(float[] q, int n, int startPos, KvCache cache, int layer, AttentionShape shape, float[] out,
                       KvRowProducts products, CpuThreads threads) {
        int headDim = shape.headDim();
        int queryDim = shape.queryDim();
        int headsPerKv = shape.numHeads() / shape.numKvHeads();
        float scale = (float) (1.0 / Math.sqrt(headDim));
        KvRows keys = cache.keys(layer);
        KvRows values = cache.values(layer);
        long workPerItem = (long) (startPos + n) * headDim * 2;
        threads.parallelFor(n * shape.numHeads(), workPerItem, (start, end) -> {
            float[] scores = new float[startPos + n];
            for (int item = start; item < end; item++) {
                int i = item / shape.numHeads();
                int head = item % shape.numHeads();
                int position = startPos + i;
                int first = shape.firstVisible(position);
                int qOffset = i * queryDim + head * headDim;
                int kvOffset = (head / headsPerKv) * headDim;

                float max = Float.NEGATIVE_INFINITY;
                for (int t = first; t <= position; t++) {
                    scores[t] = products.dot(keys, t, kvOffset, q, qOffset, headDim) * scale;
                    max = Math.max(max, scores[t]);
                }
                float sum = 0;
                for (int t = first; t <= position; t++) {
                    scores[t] = (float) Math.exp(scores[t] - max);
                    sum += scores[t];
                }
                Arrays.fill(out, qOffset, qOffset + headDim, 0f);
                for (int t = first; t <= position; t++) {
                    products.accumulate(values, t, kvOffset, scores[t] / sum, out, qOffset, headDim);
                }
            }
        });
    }
}
