package io.zse.serve;

import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.generate.Sampler;
import io.zse.model.LlamaModel;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * A forward pass over a whole prompt that is not a generation: the prompt's own token logprobs (completions with
 * {@code echo} and {@code logprobs}) or its pooled final hidden state (embeddings). Each pass has a KV cache of its
 * own, off-heap, freed when the pass ends however it ends; the prompt runs in chunks so the activations stay small.
 */
public final class PromptPass {
    /** Rows of logits one chunk may return: 16 M floats (64 MiB) whatever the vocabulary. */
    private static final long LOGITS_PER_CHUNK = 16L << 20;
    private static final int MAX_CHUNK = 512;

    private final LlamaModel model;
    private final KvCacheType kvType;
    private final IntConsumer prefilled;

    /** @param prefilled told the tokens of each chunk once it has run (the engine's prompt-token count) */
    public PromptPass(LlamaModel model, KvCacheType kvType, IntConsumer prefilled) {
        this.model = model;
        this.kvType = kvType;
        this.prefilled = prefilled;
    }

    /**
     * The logprob of each token after the first given the ones before it, with its {@code top} most likely
     * alternatives: entry i is about ids[i + 1].
     */
    public List<Sampler.Choice> tokenLogprobs(int[] ids, int top) {
        int vocab = model.config().vocabSize();
        int chunk = (int) Math.clamp(LOGITS_PER_CHUNK / vocab, 1, MAX_CHUNK);
        List<Sampler.Choice> scores = new ArrayList<>(ids.length);
        try (Arena arena = Arena.ofShared()) {
            KvCache cache = cache(ids.length, arena);
            for (int start = 0; start < ids.length - 1; start += chunk) {
                // the last token's logits would be about a token that is not in the prompt
                int n = Math.min(chunk, ids.length - start);
                int[] rows = new int[Math.min(n, ids.length - 1 - start)];
                Arrays.setAll(rows, i -> i);
                float[] logits = model.forward(Arrays.copyOfRange(ids, start, start + n),
                        BatchLayout.single(cache, start, n), rows);
                prefilled.accept(n);
                for (int r = 0; r < rows.length; r++) {
                    scores.add(Sampler.score(logits, r * vocab, vocab, ids[start + r + 1], top));
                }
            }
        }
        return scores;
    }

    /**
     * The final hidden states of the prompt pooled into one vector of hiddenSize and scaled to unit length: the mean
     * over every position, or the last position's.
     */
    public float[] embedding(int[] ids, Pooling pooling) {
        int d = model.config().hiddenSize();
        double[] sum = new double[d];
        float[] last = null;
        try (Arena arena = Arena.ofShared()) {
            KvCache cache = cache(ids.length, arena);
            for (int start = 0; start < ids.length; start += MAX_CHUNK) {
                int n = Math.min(MAX_CHUNK, ids.length - start);
                float[] hidden = model.hiddenStates(Arrays.copyOfRange(ids, start, start + n),
                        BatchLayout.single(cache, start, n));
                prefilled.accept(n);
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < d; i++) {
                        sum[i] += hidden[r * d + i];
                    }
                }
                last = Arrays.copyOfRange(hidden, (n - 1) * d, n * d);
            }
        }
        float[] pooled = new float[d];
        for (int i = 0; i < d; i++) {
            pooled[i] = pooling == Pooling.LAST ? last[i] : (float) (sum[i] / ids.length);
        }
        return normalized(pooled);
    }

    static float[] normalized(float[] v) {
        double norm = 0;
        for (float x : v) {
            norm += (double) x * x;
        }
        norm = Math.sqrt(norm);
        if (norm > 0) {
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (v[i] / norm);
            }
        }
        return v;
    }

    private KvCache cache(int positions, Arena arena) {
        if (positions == 0 || positions > model.config().contextLength()) {
            throw new IllegalArgumentException("a prompt of " + positions + " tokens: must be 1.."
                    + model.config().contextLength());
        }
        int blocks = (positions + KvCache.DEFAULT_BLOCK_SIZE - 1) / KvCache.DEFAULT_BLOCK_SIZE;
        KvBlockPool pool = model.newPool(kvType, KvCache.DEFAULT_BLOCK_SIZE, blocks, arena);
        KvCache cache = new KvCache(pool, positions);
        model.startSequence(cache, positions);
        return cache;
    }
}
