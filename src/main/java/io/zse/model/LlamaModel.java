package io.zse.model;

import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseFile;

/**
 * The Llama-family decoder (Llama, Mistral, Qwen2), written once against {@link Backend} ops. Stateless apart from its
 * weights: each sequence brings its own {@link KvCache}, so one model serves many sequences.
 */
public final class LlamaModel {
    private final ModelConfig config;
    private final Weights weights;
    private final Backend backend;
    private final AttentionShape attentionShape;
    private final float[] ropeFrequencies; // [headDim / 2]

    public LlamaModel(ModelConfig config, Weights weights, Backend backend) {
        this.config = config;
        this.weights = weights;
        this.backend = backend;
        this.attentionShape = new AttentionShape(config.numHeads(), config.numKvHeads(), config.headDim(),
                config.slidingWindow() == null ? 0 : config.slidingWindow());
        this.ropeFrequencies = RotaryFrequencies.of(config.headDim(), config.ropeTheta(), config.ropeScaling());
    }

    /** Reads the config and views the weights of an open file (no weight bytes are read on the CPU backend). */
    public static LlamaModel load(ZseFile file, Backend backend) {
        ModelConfig config = ModelConfig.fromJson(file.configJson());
        return new LlamaModel(config, Weights.load(file, config, backend), backend);
    }

    public ModelConfig config() {
        return config;
    }

    /** An F32 cache for one sequence of up to {@code capacity} positions (at most the context length). */
    public KvCache newCache(int capacity) {
        return newCache(capacity, KvCacheType.F32);
    }

    /** A cache for one sequence of up to {@code capacity} positions, storing keys and values as {@code type}. */
    public KvCache newCache(int capacity, KvCacheType type) {
        if (capacity <= 0 || capacity > config.contextLength()) {
            throw new IllegalArgumentException("KV cache of " + capacity + " positions: must be 1.."
                    + config.contextLength() + " (the context length)");
        }
        return new KvCache(type, config.numLayers(), capacity, config.numKvHeads(), config.headDim());
    }

    /** Runs {@code tokens} at positions startPos.. and returns the logits of the last one [vocab]. */
    public float[] forward(int[] tokens, int startPos, KvCache cache) {
        return forward(tokens, startPos, cache, false);
    }

    /** Like {@link #forward} but returns the logits of every position [tokens.length, vocab]. */
    public float[] forwardAll(int[] tokens, int startPos, KvCache cache) {
        return forward(tokens, startPos, cache, true);
    }

    private float[] forward(int[] tokens, int startPos, KvCache cache, boolean allPositions) {
        int n = tokens.length;
        checkFits(n, startPos, cache);
        int d = config.hiddenSize();
        int qDim = attentionShape.queryDim();
        int kvDim = attentionShape.kvDim();
        int ff = config.intermediateSize();
        float eps = (float) config.normEps();

        float[] x = new float[n * d];        // residual stream [n, d]
        float[] normed = new float[n * d];   // [n, d]
        float[] q = new float[n * qDim];     // [n, q]
        float[] k = new float[n * kvDim];    // [n, kv]
        float[] v = new float[n * kvDim];    // [n, kv]
        float[] attended = new float[n * qDim];
        float[] projected = new float[n * d];
        float[] gate = new float[n * ff];    // [n, ff]
        float[] up = new float[n * ff];

        backend.embed(weights.embeddings(), tokens, x);
        for (int layer = 0; layer < config.numLayers(); layer++) {
            Weights.Layer w = weights.layers().get(layer);

            // Attention block: x += o_proj(attention(rope(q), rope(k), v)) of the normed stream.
            backend.rmsNorm(x, n, w.attentionNorm(), eps, normed);
            linear(normed, n, w.query(), w.queryBias(), q);
            linear(normed, n, w.key(), w.keyBias(), k);
            linear(normed, n, w.value(), w.valueBias(), v);
            backend.rope(q, n, config.numHeads(), config.headDim(), startPos, ropeFrequencies);
            backend.rope(k, n, config.numKvHeads(), config.headDim(), startPos, ropeFrequencies);
            cache.store(layer, startPos, n, k, v);
            backend.attention(q, n, startPos, cache, layer, attentionShape, attended);
            linear(attended, n, w.output(), w.outputBias(), projected);
            backend.add(x, projected, n * d);

            // Feed-forward block: x += down(silu(gate(h)) * up(h)) of the normed stream.
            backend.rmsNorm(x, n, w.ffnNorm(), eps, normed);
            backend.matmul(normed, n, w.gate(), gate);
            backend.matmul(normed, n, w.up(), up);
            backend.swiglu(gate, up, n * ff);
            backend.matmul(gate, n, w.down(), projected);
            backend.add(x, projected, n * d);
        }
        cache.setLength(startPos + n);

        // Only the rows whose logits are wanted go through the final norm and the (large) output projection.
        int rows = allPositions ? n : 1;
        float[] last = allPositions ? x : java.util.Arrays.copyOfRange(x, (n - 1) * d, n * d);
        float[] lastNormed = new float[rows * d];
        backend.rmsNorm(last, rows, weights.finalNorm(), eps, lastNormed);
        float[] logits = new float[rows * config.vocabSize()];
        backend.matmul(lastNormed, rows, weights.outputProjection(), logits);
        return logits;
    }

    private void linear(float[] in, int n, WeightMatrix weight, float[] bias, float[] out) {
        backend.matmul(in, n, weight, out);
        if (bias != null) {
            backend.addBias(out, n, bias);
        }
    }

    private void checkFits(int n, int startPos, KvCache cache) {
        if (n == 0) {
            throw new IllegalArgumentException("no tokens to run");
        }
        // startPos below the cache length rewinds (the later positions are overwritten); a gap would read garbage.
        if (startPos < 0 || startPos > cache.length()) {
            throw new IllegalArgumentException("start position " + startPos + " leaves a gap after the "
                    + cache.length() + " positions already in the KV cache");
        }
        long end = (long) startPos + n;
        if (end > config.contextLength()) {
            throw new IllegalArgumentException(n + " tokens from position " + startPos + " exceed the context length of "
                    + config.contextLength());
        }
        if (end > cache.capacity()) {
            throw new IllegalArgumentException(n + " tokens from position " + startPos + " exceed the KV cache capacity of "
                    + cache.capacity());
        }
    }
}
