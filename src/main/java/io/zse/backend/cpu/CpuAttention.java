package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.KvCache;
import jdk.incubator.vector.FloatVector;

/** Scaled dot-product attention over a {@link KvCache}, one (query row, head) pair per work item. */
final class CpuAttention {
    private CpuAttention() {
    }

    /** See {@link io.zse.backend.Backend#attention}. */
    static void attend(float[] q, int n, int startPos, KvCache cache, int layer, AttentionShape shape, float[] out,
                       CpuThreads threads) {
        int headDim = shape.headDim();
        int queryDim = shape.queryDim();
        int kvDim = shape.kvDim();
        int headsPerKv = shape.numHeads() / shape.numKvHeads();
        float scale = (float) (1.0 / Math.sqrt(headDim));
        float[] keys = cache.keys(layer);
        float[] values = cache.values(layer);
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
                    scores[t] = F32Matmul.dot(q, qOffset, keys, t * kvDim + kvOffset, headDim) * scale;
                    max = Math.max(max, scores[t]);
                }
                float sum = 0;
                for (int t = first; t <= position; t++) {
                    scores[t] = (float) Math.exp(scores[t] - max);
                    sum += scores[t];
                }
                java.util.Arrays.fill(out, qOffset, qOffset + headDim, 0f);
                for (int t = first; t <= position; t++) {
                    addScaled(out, qOffset, scores[t] / sum, values, t * kvDim + kvOffset, headDim);
                }
            }
        });
    }

    /** y[yOffset + k] += a · x[xOffset + k] for k < length. */
    private static void addScaled(float[] y, int yOffset, float a, float[] x, int xOffset, int length) {
        var species = Matmul.FLOATS;
        int k = 0;
        for (int upper = species.loopBound(length); k < upper; k += species.length()) {
            FloatVector.fromArray(species, x, xOffset + k)
                    .fma(FloatVector.broadcast(species, a), FloatVector.fromArray(species, y, yOffset + k))
                    .intoArray(y, yOffset + k);
        }
        for (; k < length; k++) {
            y[yOffset + k] += a * x[xOffset + k];
        }
    }
}
