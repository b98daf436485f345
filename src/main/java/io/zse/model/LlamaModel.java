package io.zse.model;

import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseFile;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

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

    /** Bytes one position of a {@code type} KV cache takes: keys and values of every layer, scales included. */
    public long kvBytesPerPosition(KvCacheType type) {
        return newCache(1, type).bytesPerPosition();
    }

    /** Runs {@code tokens} at positions startPos.. and returns the logits of the last one [vocab]. */
    public float[] forward(int[] tokens, int startPos, KvCache cache) {
        return run(tokens, new Segment[]{new Segment(cache, startPos, 0, tokens.length)}, false);
    }

    /** Like {@link #forward} but returns the logits of every position [tokens.length, vocab]. */
    public float[] forwardAll(int[] tokens, int startPos, KvCache cache) {
        return run(tokens, new Segment[]{new Segment(cache, startPos, 0, tokens.length)}, true);
    }

    /**
     * One decode step for several sequences together: tokens[i] goes at position {@code caches[i].length()} of its own
     * cache. The weight matrices are read once for the whole batch. Returns logits [tokens.length, vocab], row i for
     * sequence i, identical to what {@link #forward} gives each sequence alone.
     */
    public float[] decodeBatch(int[] tokens, KvCache[] caches) {
        if (tokens.length != caches.length) {
            throw new IllegalArgumentException(tokens.length + " tokens for " + caches.length + " caches");
        }
        Segment[] segments = new Segment[tokens.length];
        Set<KvCache> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < tokens.length; i++) {
            if (!seen.add(caches[i])) {
                throw new IllegalArgumentException("sequence " + i + " shares its KV cache with an earlier one");
            }
            segments[i] = new Segment(caches[i], caches[i].length(), i, 1);
        }
        return run(tokens, segments, false);
    }

    /** Rows offset..offset+length-1 of a batch belong to one sequence and go at positions startPos.. of its cache. */
    private record Segment(KvCache cache, int startPos, int offset, int length) {
        int end() {
            return startPos + length;
        }
    }

    private float[] run(int[] tokens, Segment[] segments, boolean allPositions) {
        int n = tokens.length;
        for (Segment segment : segments) {
            checkFits(segment.length(), segment.startPos(), segment.cache());
        }
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
        SegmentRows rows = segments.length == 1 ? null : new SegmentRows(qDim, kvDim);

        backend.embed(weights.embeddings(), tokens, x);
        for (int layer = 0; layer < config.numLayers(); layer++) {
            Weights.Layer w = weights.layers().get(layer);

            // Attention block: x += o_proj(attention(rope(q), rope(k), v)) of the normed stream.
            backend.rmsNorm(x, n, w.attentionNorm(), eps, normed);
            linear(normed, n, w.query(), w.queryBias(), q);
            linear(normed, n, w.key(), w.keyBias(), k);
            linear(normed, n, w.value(), w.valueBias(), v);
            if (rows == null) {
                attend(segments[0], layer, q, k, v, attended);
            } else {
                for (Segment segment : segments) {
                    rows.attend(segment, layer, q, k, v, attended);
                }
            }
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
        for (Segment segment : segments) {
            segment.cache().setLength(segment.end());
        }

        // Only the rows whose logits are wanted go through the final norm and the (large) output projection.
        float[] wanted;
        int wantedRows;
        if (allPositions) {
            wanted = x;
            wantedRows = n;
        } else {
            wantedRows = segments.length;
            wanted = new float[wantedRows * d];
            for (int i = 0; i < segments.length; i++) {
                int lastRow = segments[i].offset() + segments[i].length() - 1;
                System.arraycopy(x, lastRow * d, wanted, i * d, d);
            }
        }
        float[] wantedNormed = new float[wantedRows * d];
        backend.rmsNorm(wanted, wantedRows, weights.finalNorm(), eps, wantedNormed);
        float[] logits = new float[wantedRows * config.vocabSize()];
        backend.matmul(wantedNormed, wantedRows, weights.outputProjection(), logits);
        return logits;
    }

    /** RoPE, cache store and attention for rows that all belong to one sequence (the whole batch). */
    private void attend(Segment segment, int layer, float[] q, float[] k, float[] v, float[] out) {
        int n = segment.length();
        backend.rope(q, n, config.numHeads(), config.headDim(), segment.startPos(), ropeFrequencies);
        backend.rope(k, n, config.numKvHeads(), config.headDim(), segment.startPos(), ropeFrequencies);
        segment.cache().store(layer, segment.startPos(), n, k, v);
        backend.attention(q, n, segment.startPos(), segment.cache(), layer, attentionShape, out);
    }

    /**
     * Scratch rows for a batch of several sequences: each sequence's rows are copied out, attended over its own cache
     * and copied back, so the backend ops keep their one-sequence signatures.
     */
    private final class SegmentRows {
        private final int qDim;
        private final int kvDim;
        private float[] q = new float[0];
        private float[] k = new float[0];
        private float[] v = new float[0];
        private float[] out = new float[0];

        SegmentRows(int qDim, int kvDim) {
            this.qDim = qDim;
            this.kvDim = kvDim;
        }

        void attend(Segment segment, int layer, float[] batchQ, float[] batchK, float[] batchV, float[] batchOut) {
            int n = segment.length();
            if (q.length != n * qDim) {
                q = new float[n * qDim];
                k = new float[n * kvDim];
                v = new float[n * kvDim];
                out = new float[n * qDim];
            }
            System.arraycopy(batchQ, segment.offset() * qDim, q, 0, n * qDim);
            System.arraycopy(batchK, segment.offset() * kvDim, k, 0, n * kvDim);
            System.arraycopy(batchV, segment.offset() * kvDim, v, 0, n * kvDim);
            LlamaModel.this.attend(segment, layer, q, k, v, out);
            System.arraycopy(out, 0, batchOut, segment.offset() * qDim, n * qDim);
        }
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
