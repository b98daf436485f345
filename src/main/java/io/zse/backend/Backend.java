package io.zse.backend;

import io.zse.format.ZseTensor;

/**
 * The ops a decoder needs; the forward pass is written once against them. Activations are F32 row-major arrays
 * whose first dimension is n, the tokens processed together: decode tokens of several sequences and prompt chunks,
 * laid out by a {@link BatchLayout}.
 */
public interface Backend extends AutoCloseable {

    /** Prepares a 2-D weight [out, in] of any storage type (the CPU backend reads it in place; nothing is copied). */
    WeightMatrix weight(ZseTensor tensor);

    /** out[n, w.rows] = x[n, w.cols] · wᵀ. Each weight row is read once for all n rows of x. */
    void matmul(float[] x, int n, WeightMatrix w, float[] out);

    /** x[i, :] += bias for each of the n rows of x [n, bias.length]. */
    void addBias(float[] x, int n, float[] bias);

    /** out[i, :] = x[i, :] / sqrt(mean(x[i, :]²) + eps) * weight, for n rows of width weight.length. */
    void rmsNorm(float[] x, int n, float[] weight, float eps, float[] out);

    /**
     * Rotates x [rows, heads * headDim] in place, row i at position {@code batch.position(i)}, pairing element j with
     * j + headDim/2 (Hugging Face rotate-half); angle = position * inverseFrequencies[j], j < headDim/2.
     */
    void rope(float[] x, BatchLayout batch, int heads, int headDim, float[] inverseFrequencies);

    /**
     * Causal attention of queries q [rows, numHeads * headDim], each row at its position, over the keys and values of
     * {@code layer} in its sequence's cache at positions 0..position (already stored), every sequence of the batch
     * in one call; out [rows, numHeads * headDim].
     */
    void attention(float[] q, BatchLayout batch, int layer, AttentionShape shape, float[] out);

    /** gate[k] = silu(gate[k]) * up[k] for k < length (SwiGLU). */
    void swiglu(float[] gate, float[] up, int length);

    /** out[i, :] = row tokens[i] of table [vocab, dim], decoded to F32. */
    void embed(WeightMatrix table, int[] tokens, float[] out);

    /** x[k] += y[k] for k < length (residual connection). */
    void add(float[] x, float[] y, int length);

    /** Releases worker threads or device memory. */
    @Override
    void close();
}
