package io.zse.backend;

import io.zse.format.ZseTensor;

/**
 * The ops a decoder needs; the forward pass is written once against them. Activations are F32 row-major
 * {@link ActivationBuffer}s the backend owns, whose first dimension is n, the tokens processed together: decode tokens
 * of several sequences and prompt chunks, laid out by a {@link BatchLayout}. Only {@link #write} and {@link #read}
 * move activations between the host and the backend.
 */
public interface Backend extends AutoCloseable {

    /** Prepares a 2-D weight [out, in] of any storage type (the CPU backend reads it in place; nothing is copied). */
    WeightMatrix weight(ZseTensor tensor);

    /** A buffer of {@code floats} activations (contents undefined). */
    ActivationBuffer allocate(long floats);

    /** into[0 .. values.length) = values. */
    void write(float[] values, ActivationBuffer into);

    /** into[0 .. count) = from[0 .. count): the one way activations come back to the host. */
    void read(ActivationBuffer from, float[] into, int count);

    /** Row i of into [rows.length, width] = row rows[i] of from [?, width]. */
    void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into);

    /** out[n, w.rows] = x[n, w.cols] · wᵀ. Each weight row is read once for all n rows of x. */
    void matmul(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer out);

    /** x[i, :] += bias for each of the n rows of x [n, bias.length]. */
    void addBias(ActivationBuffer x, int n, float[] bias);

    /** out[i, :] = x[i, :] / sqrt(mean(x[i, :]²) + eps) * weight, for n rows of width weight.length. */
    void rmsNorm(ActivationBuffer x, int n, float[] weight, float eps, ActivationBuffer out);

    /**
     * Rotates rows fromRow..toRow-1 of x [rows, heads * headDim] in place, row i at position {@code batch.position(i)},
     * pairing element j with j + headDim/2 (Hugging Face rotate-half); angle = position * inverseFrequencies[j],
     * j < headDim/2.
     */
    void rope(ActivationBuffer x, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
              float[] inverseFrequencies);

    /** {@link #rope(ActivationBuffer, BatchLayout, int, int, int, int, float[])} of every row of the batch. */
    default void rope(ActivationBuffer x, BatchLayout batch, int heads, int headDim, float[] inverseFrequencies) {
        rope(x, batch, 0, batch.rows(), heads, headDim, inverseFrequencies);
    }

    /** Stores the rows of k and v [rows, kvDim] of {@code layer} at their positions of their sequences' caches. */
    void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer);

    /**
     * Causal attention of queries q [rows, numHeads * headDim], each row at its position, over the keys and values of
     * {@code layer} in its sequence's cache at positions 0..position (already stored), every sequence of the batch
     * in one call; out [rows, numHeads * headDim].
     */
    void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out);

    /** gate[k] = silu(gate[k]) * up[k] for k < length (SwiGLU). */
    void swiglu(ActivationBuffer gate, ActivationBuffer up, int length);

    /** out[i, :] = row tokens[i] of table [vocab, dim], decoded to F32. */
    void embed(WeightMatrix table, int[] tokens, ActivationBuffer out);

    /** x[k] += y[k] for k < length (residual connection). */
    void add(ActivationBuffer x, ActivationBuffer y, int length);

    /** Releases worker threads or device memory. */
    @Override
    void close();
}
