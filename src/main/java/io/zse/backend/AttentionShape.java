package io.zse.backend;

/**
 * The head layout of one attention layer.
 *
 * @param numHeads      query heads
 * @param numKvHeads    key/value heads; each serves numHeads / numKvHeads query heads (grouped-query attention)
 * @param headDim       width of one head
 * @param slidingWindow a query at position p sees keys at positions > p - slidingWindow; 0 for full attention
 */
public record AttentionShape(int numHeads, int numKvHeads, int headDim, int slidingWindow) {
    public AttentionShape {
        if (numHeads <= 0 || numKvHeads <= 0 || numHeads % numKvHeads != 0 || headDim <= 0 || slidingWindow < 0) {
            throw new IllegalArgumentException("bad attention shape: " + numHeads + " heads, " + numKvHeads
                    + " kv heads, head dim " + headDim + ", sliding window " + slidingWindow);
        }
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
