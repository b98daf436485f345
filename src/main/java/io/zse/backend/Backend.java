package io.zse.backend;

import io.zse.format.ZseTensor;

/**
 * The ops a decoder needs; the forward pass is written once against them. Activations are F32 row-major arrays
 * whose first dimension is n, the tokens processed together (the prompt during prefill, 1 while decoding).
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
     * Rotates x [n, heads * headDim] in place, row i at position startPos + i, pairing element j with
     * j + headDim/2 (Hugging Face rotate-half); angle = position * inverseFrequencies[j], j < headDim/2.
     */
    void rope(float[] x, int n, int heads, int headDim, int startPos, float[] inverseFrequencies);

    /**
     * Causal attention of queries q [n, numHeads * headDim] at positions startPos..startPos+n-1 over the keys and
     * values of {@code layer} in the cache at positions 0..startPos+n-1 (already stored); out [n, numHeads * headDim].
     */
    void attention(float[] q, int n, int startPos, KvCache cache, int layer, AttentionShape shape, float[] out);

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
