package io.zse.backend;

import io.zse.format.ZseTensor;

import java.util.List;

/**
 * The ops a decoder needs; the forward pass is written once against them. Activations are F32 row-major
 * {@link ActivationBuffer}s the backend owns, whose first dimension is n, the tokens processed together: decode tokens
 * of several sequences and prompt chunks, laid out by a {@link BatchLayout}. Only {@link #write} and {@link #read}
 * move activations between the host and the backend.
 */
public interface Backend extends AutoCloseable {

    /** Prepares a 2-D weight [out, in] of any storage type (the CPU backend reads it in place; nothing is copied). */
    WeightMatrix weight(ZseTensor tensor);

    /**
     * The weights {@link #weight} is about to be asked for, in that order: a device backend may take their memory in
     * one allocation rather than one a tensor. A hint only: {@link #weight} takes any tensor either way.
     */
    default void expectWeights(List<ZseTensor> tensors) {
    }

    /** A buffer of {@code floats} activations (contents undefined). */
    ActivationBuffer allocate(long floats);

    /** into[0 .. values.length) = values. */
    void write(float[] values, ActivationBuffer into);

    /** into[0 .. count) = from[0 .. count): the one way activations come back to the host. */
    void read(ActivationBuffer from, float[] into, int count);

    /**
     * into[i·width ..] = row rows[i] of from [?, width]: only the rows a caller needs cross to the host. Default: reads
     * the rows up to the last one asked for and copies them out.
     */
    default void readRows(ActivationBuffer from, int[] rows, int width, float[] into) {
        int last = -1;
        for (int row : rows) {
            if (row < 0) {
                throw new IllegalArgumentException("negative row " + row);
            }
            last = Math.max(last, row);
        }
        if (last < 0) {
            return;
        }
        float[] all = new float[Math.multiplyExact(last + 1, width)];
        read(from, all, all.length);
        for (int i = 0; i < rows.length; i++) {
            System.arraycopy(all, rows[i] * width, into, i * width, width);
        }
    }

    /**
     * Whether {@link #sample} draws tokens where the logits are, so that only the ids cross to the host. Default: no
     * (the host samples from the logits it reads).
     */
    default boolean samplesOnDevice() {
        return false;
    }

    /**
     * One token for each of the n rows of logits [n, vocab], drawn where they are; {@code parameters} holds
     * {@value io.zse.generate.Sampler#DEVICE_PARAMETERS} values per row as {@link io.zse.generate.Sampler#deviceDraw}
     * writes them. A row is -1 when the backend leaves it to the host. Only where {@link #samplesOnDevice}.
     */
    default int[] sample(ActivationBuffer logits, int n, int vocab, double[] parameters) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not sample on its device");
    }

    /**
     * The residual add and the RMSNorm after it: x += y over n rows of weight.length, then out = rmsNorm(x). A backend
     * may do both in one pass over x. Default: {@link #add} then {@link #rmsNorm}.
     */
    default void addRmsNorm(ActivationBuffer x, ActivationBuffer y, int n, float[] weight, float eps,
                            ActivationBuffer out) {
        add(x, y, Math.multiplyExact(n, weight.length));
        rmsNorm(x, n, weight, eps, out);
    }

    /**
     * An output or down projection and the residual add + RMSNorm after it: projected[n, w.rows] = x · wᵀ, stream +=
     * projected, out = rmsNorm(stream) (weight.length = w.rows). A backend may add each output to the stream as it
     * finishes, leaving projected unwritten. Default: {@link #matmul}, then {@link #addRmsNorm}.
     */
    default void matmulAddRmsNorm(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer projected,
                                  ActivationBuffer stream, float[] weight, float eps, ActivationBuffer out) {
        matmul(x, n, w, projected);
        addRmsNorm(stream, projected, n, weight, eps, out);
    }

    /**
     * RoPE of the keys on their way into the caches: the caches get k ({@code kvHeads} heads) rotated as {@link #rope}
     * rotates it, and v. A backend may rotate while it writes, leaving k as it was. Default: {@link #rope} of k in place,
     * then {@link #storeKv}.
     */
    default void ropeStoreKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int kvHeads,
                             int headDim, float[] inverseFrequencies) {
        rope(k, batch, kvHeads, headDim, inverseFrequencies);
        storeKv(k, v, batch, layer);
    }

    /**
     * RoPE of the queries ({@code heads} heads, in place) and {@link #ropeStoreKv} of the keys and values, which a
     * backend may do in one pass. Default: {@link #rope} of q, then ropeStoreKv.
     */
    default void ropeQueriesAndStoreKv(ActivationBuffer q, int heads, ActivationBuffer k, ActivationBuffer v,
                                       BatchLayout batch, int layer, int kvHeads, int headDim,
                                       float[] inverseFrequencies) {
        rope(q, batch, heads, headDim, inverseFrequencies);
        ropeStoreKv(k, v, batch, layer, kvHeads, headDim, inverseFrequencies);
    }

    /**
     * The q, k and v products of an attention block and {@link #ropeQueriesAndStoreKv} of their outputs: q, k and v
     * [n, w.rows] = x · wᵀ, then q rotated in place and the rotated keys and the values into the caches. A backend
     * may rotate and cache each head as its products finish. Default: {@link #matmuls}, then ropeQueriesAndStoreKv.
     */
    default void projectRopeStoreKv(ActivationBuffer x, int n, WeightMatrix[] qkv, ActivationBuffer q,
                                    ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int heads,
                                    int kvHeads, int headDim, float[] inverseFrequencies) {
        matmuls(x, n, qkv, new ActivationBuffer[] {q, k, v});
        ropeQueriesAndStoreKv(q, heads, k, v, batch, layer, kvHeads, headDim, inverseFrequencies);
    }

    /** Row i of into [rows.length, width] = row rows[i] of from [?, width]. */
    void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into);

    /** out[n, w.rows] = x[n, w.cols] · wᵀ. Each weight row is read once for all n rows of x. */
    void matmul(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer out);

    /**
     * outs[j][n, ws[j].rows] = x[n, cols] · ws[j]ᵀ for every j: several products of one input (q, k and v; gate and
     * up), which a backend may run as one parallel loop over all their rows. Default: one {@link #matmul} each.
     */
    default void matmuls(ActivationBuffer x, int n, WeightMatrix[] ws, ActivationBuffer[] outs) {
        for (int j = 0; j < ws.length; j++) {
            matmul(x, n, ws[j], outs[j]);
        }
    }

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

    /**
     * The feed-forward's gated products (SwiGLU): gate[n, ff] = silu(x · gateWeightᵀ) * (x · upWeightᵀ) for x [n,
     * cols], both weights [ff, cols]; afterwards up [n, ff] holds nothing anyone may read. A backend may apply the
     * activation as the products finish, never writing up. Default: {@link #matmuls} into gate and up, then
     * {@link #swiglu}.
     */
    default void swigluProducts(ActivationBuffer x, int n, WeightMatrix gateWeight, WeightMatrix upWeight,
                                ActivationBuffer gate, ActivationBuffer up) {
        matmuls(x, n, new WeightMatrix[] {gateWeight, upWeight}, new ActivationBuffer[] {gate, up});
        swiglu(gate, up, Math.multiplyExact(n, gateWeight.rows()));
    }

    /** gate[k] = gelu_tanh(gate[k]) * up[k] for k < length (GeGLU, Gemma), gelu_tanh as PyTorch's approximate="tanh". */
    void geglu(ActivationBuffer gate, ActivationBuffer up, int length);

    /** x[k] *= factor for k < length. */
    void scale(ActivationBuffer x, int length, float factor);

    /** gate[k] = relu(gate[k])² * up[k] for k < length (BitNet's relu² gating). */
    void reluSquaredGlu(ActivationBuffer gate, ActivationBuffer up, int length);

    /** out[i, :] = row tokens[i] of table [vocab, dim], decoded to F32. */
    void embed(WeightMatrix table, int[] tokens, ActivationBuffer out);

    /** x[k] += y[k] for k < length (residual connection). */
    void add(ActivationBuffer x, ActivationBuffer y, int length);

    /**
     * The rows a forward pass of {@code batch} should run with, when it wants the logits of every row: its own, or
     * more for a backend that records passes per bucket of batch sizes and replays them (the extra rows are padding:
     * token 0, not stored in any cache, not attended, their logits ignored).
     */
    default int passRows(BatchLayout batch) {
        return batch.rows();
    }

    /**
     * Runs the ops {@code ops} issues for one forward pass of {@code tokens} (padded to {@link #passRows}) laid out by
     * {@code batch}. A backend may record them the first times it sees a pass of this program and size and later
     * replay the recording with the new tokens, positions and block tables written in place (CUDA graphs), so
     * {@code ops} must issue the same ops on the same buffers whenever it comes with the same {@code program} (an
     * object standing for the op sequence and its buffers) and row count. Default: runs them.
     */
    default void pass(Object program, int[] tokens, BatchLayout batch, Runnable ops) {
        ops.run();
    }

    /**
     * Returns once every op issued so far has completed: an asynchronous device's queue drained. The CPU backend's ops
     * are complete when they return.
     */
    default void finish() {
    }

    /** Releases worker threads or device memory. */
    @Override
    void close();
}
