package io.zse.backend;

/**
 * The head layout of one attention layer.
 *
 * @param numHeads      query heads
 * @param numKvHeads    key/value heads; each serves numHeads / numKvHeads query heads (grouped-query attention)
 * @param headDim       width of one head
 * @param slidingWindow a query at position p sees keys at positions > p - slidingWindow; 0 for full attention
 * @param scale         logits are q·k times this: 1/sqrt(headDim), or Gemma's query_pre_attn_scalar^-1/2
 * @param softCap       logits become softCap·tanh(logit / softCap) before the softmax (Gemma 2); 0 for none
 */
public record AttentionShape(int numHeads, int numKvHeads, int headDim, int slidingWindow, float scale, float softCap) {
    public AttentionShape {
        if (numHeads <= 0 || numKvHeads <= 0 || numHeads % numKvHeads != 0 || headDim <= 0 || slidingWindow < 0
                || !(scale > 0) || !(softCap >= 0) || (long) numHeads * headDim > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad attention shape: " + numHeads + " heads, " + numKvHeads
                    + " kv heads, head dim " + headDim + ", sliding window " + slidingWindow + ", scale " + scale
                    + ", soft cap " + softCap);
        }
    }

    /** The usual scaled dot product: logits times 1/sqrt(headDim), not capped. */
    public AttentionShape(int numHeads, int numKvHeads, int headDim, int slidingWindow) {
        this(numHeads, numKvHeads, headDim, slidingWindow, defaultScale(headDim), 0f);
    }

    /** 1/sqrt(headDim), rounded once to F32. */
    public static float defaultScale(int headDim) {
        return (float) (1.0 / Math.sqrt(headDim));
    }

    /** Width of q (numHeads * headDim). */
    public int queryDim() {
        return numHeads * headDim;
    }

    /** Width of k and of v (numKvHeads * headDim). */
    public int kvDim() {
        return numKvHeads * headDim;
    }

    /** First key position a query at {@code position} may attend to. */
    public int firstVisible(int position) {
        return slidingWindow == 0 ? 0 : Math.max(0, position - slidingWindow + 1);
    }
}
