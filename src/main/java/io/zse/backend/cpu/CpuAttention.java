package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvCache;
import io.zse.backend.KvRows;

import java.lang.foreign.MemorySegment;

/**
 * Scaled dot-product attention over paged {@link KvCache}s of any storage type, for every row of a batch in one call,
 * one (row, head) pair per work item; the {@link KvRowProducts} of the chosen kernels read the stored keys and values
 * in place through each sequence's block table.
 */
final class CpuAttention {
    private CpuAttention() {
    }

    /** See {@link io.zse.backend.Backend#attention}. */
    static void attend(MemorySegment q, BatchLayout batch, int layer, AttentionShape shape, MemorySegment out,
                       KvRowProducts products, CpuThreads threads) {
        int headDim = shape.headDim();
        int queryDim = shape.queryDim();
        int numHeads = shape.numHeads();
        int headsPerKv = numHeads / shape.numKvHeads();
        float scale = shape.scale();
        float softCap = shape.softCap();
        int[][] slots = new int[batch.segments().size()][];
        for (int s = 0; s < slots.length; s++) {
            slots[s] = batch.slots(s);
        }
        int maxEnd = batch.maxEnd();
        long workPerItem = (long) maxEnd * headDim * 2;
        threads.parallelFor(batch.rows() * numHeads, workPerItem, (start, end) -> {
            float[] scores = new float[maxEnd];
            for (int item = start; item < end; item++) {
                int i = item / numHeads;
                int head = item % numHeads;
                int s = batch.segmentIndex(i);
                BatchLayout.Segment segment = batch.segments().get(s);
                int[] segmentSlots = slots[s];
                KvRows keys = segment.cache().keys(layer);
                KvRows values = segment.cache().values(layer);
                int position = batch.position(i);
                int first = shape.firstVisible(position);
                long qOffset = (long) i * queryDim + head * headDim;
                int kvOffset = (head / headsPerKv) * headDim;

                float max = Float.NEGATIVE_INFINITY;
                for (int t = first; t <= position; t++) {
                    scores[t] = products.dot(keys, segmentSlots[t], kvOffset, q, qOffset, headDim) * scale;
                    if (softCap > 0) {
                        scores[t] = softCap * (float) Math.tanh(scores[t] / softCap);
                    }
                    max = Math.max(max, scores[t]);
                }
                float sum = 0;
                for (int t = first; t <= position; t++) {
                    scores[t] = (float) Math.exp(scores[t] - max);
                    sum += scores[t];
                }
                out.asSlice(qOffset * Float.BYTES, (long) headDim * Float.BYTES).fill((byte) 0);
                for (int t = first; t <= position; t++) {
                    products.accumulate(values, segmentSlots[t], kvOffset, scores[t] / sum, out, qOffset, headDim);
                }
            }
        });
    }
}
