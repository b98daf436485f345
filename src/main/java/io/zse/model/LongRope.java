package io.zse.model;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvCache;

/**
 * Which of LongRoPE's two factor sets (Phi-3) rotates each position, as transformers computes it with a KV cache.
 * transformers chooses the set of each forward pass by the pass's last position (the long factors once it lies beyond
 * the original context) and never rotates cached keys again. Generating, its first pass is the whole prompt, then one
 * token per pass, so:
 * <ul>
 *   <li>a prompt longer than the original context is rotated with the long factors from position 0, and so is every
 *       token after it;</li>
 *   <li>any other sequence is rotated with the short factors below the original context, and those keys stay so in
 *       the cache when the sequence grows past it, while each position from there on gets the long factors.</li>
 * </ul>
 * The switch position is the sequence's, decided from its prompt length ({@link KvCache#longRopeFrom()}), so the
 * engine's prompt chunks, batches, prefix cache and recomputes after preemption rotate a sequence as one
 * transformers prefill would. Not reproduced: transformers batching several sequences takes the last position of
 * the whole batch, so there one sequence's length changes the others' rotation.
 * <p>
 * transformers also multiplies cos and sin by the attention factor, so q·k by its square; here the rotated queries
 * are multiplied by that square instead, which leaves the weights (and the cached keys) as the file holds them.
 */
final class LongRope {
    private final float[] shortFrequencies; // [headDim / 2]
    private final float[] longFrequencies;  // [headDim / 2]
    private final int originalContext;
    private final float queryScale; // the attention factor squared; 1 where the converter put it into q and k

    private LongRope(float[] shortFrequencies, float[] longFrequencies, int originalContext, float queryScale) {
        this.shortFrequencies = shortFrequencies;
        this.longFrequencies = longFrequencies;
        this.originalContext = originalContext;
        this.queryScale = queryScale;
    }

    /** The model's LongRoPE, or null when it uses another RoPE. */
    static LongRope of(ModelConfig c) {
        RopeScaling s = c.ropeScaling();
        if (s == null || !s.type().equals("longrope")) {
            return null;
        }
        return new LongRope(RotaryFrequencies.of(c.headDim(), c.ropeTheta(), s),
                RotaryFrequencies.ofLongFactors(c.headDim(), c.ropeTheta(), s), s.originalContextLength(),
                s.factorInWeights() ? 1f : (float) (s.factor() * s.factor()));
    }

    /** The first position rotated with the long factors in a sequence whose prompt has {@code promptLength} tokens. */
    int switchPosition(int promptLength) {
        return promptLength > originalContext ? 0 : originalContext;
    }

    /**
     * Decides the switch of each sequence of the pass that runs for the first time without one: its first pass is
     * taken for its prompt, as transformers takes it (callers that split a prompt declare its length beforehand:
     * {@link LlamaModel#startSequence}).
     */
    void decideNewSequences(BatchLayout batch) {
        for (BatchLayout.Segment s : batch.segments()) {
            if (s.cache().longRopeFrom() == KvCache.UNDECIDED) {
                s.cache().decideLongRopeFrom(switchPosition(s.end()));
            }
        }
    }

    /** Rotates x [rows, heads * headDim]: each run of rows on the same side of their sequences' switch in one call. */
    void rotate(Backend backend, ActivationBuffer x, BatchLayout batch, int heads, int headDim) {
        int start = 0;
        boolean longRun = false;
        for (int row = 0; row < batch.rows(); row++) {
            boolean isLong = batch.position(row) >= batch.segments().get(batch.segmentIndex(row)).cache().longRopeFrom();
            if (row > start && isLong != longRun) {
                backend.rope(x, batch, start, row, heads, headDim, longRun ? longFrequencies : shortFrequencies);
                start = row;
            }
            longRun = isLong;
        }
        backend.rope(x, batch, start, batch.rows(), heads, headDim, longRun ? longFrequencies : shortFrequencies);
    }

    /** Multiplies the rotated queries q [rows, width] by the attention factor's square. */
    void scaleQueries(Backend backend, ActivationBuffer q, int rows, int width) {
        if (queryScale != 1f) {
            backend.scale(q, rows * width, queryScale);
        }
    }
}
