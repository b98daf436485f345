package io.zse.generate;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.model.LlamaModel;

import java.util.Arrays;

/**
 * How far a model (quantized weights, or a smaller KV cache) strays from a reference on a text, teacher-forced: both
 * read the same tokens and their next-token distributions are compared at every position, giving KL(ref ‖ model),
 * top-1 agreement and each one's perplexity on the text.
 *
 * <p>The text is cut into windows of at most the context length; consecutive windows share one token, so every token
 * after the first is predicted exactly once, from the context inside its window. A window runs in chunks through
 * {@link LlamaModel#forwardAll} (batched prefill), so memory stays at chunk × vocab logits per model.
 */
public final class QualityComparison {
    /** Positions per forwardAll call: bounds the logits held at once (chunk × vocab floats per model). */
    private static final int CHUNK = 64;

    /** One side of the comparison: a model and how its KV cache stores keys and values. */
    public record Side(LlamaModel model, KvCacheType kvCacheType) {
    }

    /**
     * The figures over {@code tokens} predicted positions.
     *
     * @param windows              windows the text was cut into
     * @param windowLength         their maximum length (the smaller context length)
     * @param meanKl               mean KL(ref ‖ model) in nats
     * @param p99Kl                99th percentile of the per-position KL
     * @param maxKl                largest per-position KL
     * @param top1Agreement        share of positions where both put the same token first
     * @param referencePerplexity  exp of the reference's mean negative log-likelihood of the actual next token
     * @param modelPerplexity      the same for the model
     */
    public record Report(int tokens, int windows, int windowLength, double meanKl, double p99Kl, double maxKl,
                         double top1Agreement, double referencePerplexity, double modelPerplexity) {
    }

    private QualityComparison() {
    }

    /**
     * Compares {@code model} with {@code reference} over {@code text} (token ids, usually starting with BOS),
     * evaluating at most {@code maxTokens} predictions.
     */
    public static Report compare(Side reference, Side model, int[] text, int maxTokens) {
        int vocab = reference.model().config().vocabSize();
        if (model.model().config().vocabSize() != vocab) {
            throw new IllegalArgumentException("the models have different vocabularies (" + vocab + " and "
                    + model.model().config().vocabSize() + " tokens): they cannot be compared");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("max tokens must be at least 1, not " + maxTokens);
        }
        int predictions = Math.min(text.length - 1, maxTokens);
        if (predictions < 1) {
            throw new IllegalArgumentException("the text has " + text.length + " tokens: at least 2 are needed");
        }
        for (int id : text) {
            if (id < 0 || id >= vocab) {
                throw new IllegalArgumentException("token id " + id + " outside the vocabulary 0.." + (vocab - 1));
            }
        }
        int window = Math.min(reference.model().config().contextLength(), model.model().config().contextLength());
        if (window < 2) {
            throw new IllegalArgumentException("a context of " + window + " token cannot predict anything");
        }
        double[] kl = new double[predictions];
        int agree = 0;
        double referenceNll = 0;
        double modelNll = 0;
        int done = 0;
        int windows = 0;
        while (done < predictions) {
            // Positions done .. done + length - 1 of the text, predicting the token after each.
            int length = Math.min(window, predictions - done + 1);
            KvCache referenceCache = reference.model().newCache(length, reference.kvCacheType());
            KvCache modelCache = model.model().newCache(length, model.kvCacheType());
            reference.model().startSequence(referenceCache, length); // each window is one pass of transformers
            model.model().startSequence(modelCache, length);
            for (int chunkStart = 0; chunkStart < length; chunkStart += CHUNK) {
                int[] chunk = Arrays.copyOfRange(text, done + chunkStart, done + Math.min(length, chunkStart + CHUNK));
                float[] referenceLogits = reference.model().forwardAll(chunk, chunkStart, referenceCache);
                float[] modelLogits = model.model().forwardAll(chunk, chunkStart, modelCache);
                for (int i = 0; i < chunk.length && chunkStart + i < length - 1; i++) {
                    int position = done + chunkStart + i;
                    int next = text[position + 1];
                    double[] p = logSoftmax(referenceLogits, i * vocab, vocab);
                    double[] q = logSoftmax(modelLogits, i * vocab, vocab);
                    kl[position] = klDivergence(p, q);
                    agree += argmax(p) == argmax(q) ? 1 : 0;
                    referenceNll -= p[next];
                    modelNll -= q[next];
                }
            }
            done += length - 1;
            windows++;
        }
        double meanKl = Arrays.stream(kl).average().orElse(0);
        double[] sorted = kl.clone();
        Arrays.sort(sorted);
        return new Report(predictions, windows, window, meanKl, percentile(sorted, 0.99), sorted[sorted.length - 1],
                (double) agree / predictions, Math.exp(referenceNll / predictions), Math.exp(modelNll / predictions));
    }

    /** log softmax of logits[offset .. offset + vocab), in double. */
    static double[] logSoftmax(float[] logits, int offset, int vocab) {
        double max = Double.NEGATIVE_INFINITY;
        for (int t = 0; t < vocab; t++) {
            max = Math.max(max, logits[offset + t]);
        }
        double sum = 0;
        for (int t = 0; t < vocab; t++) {
            sum += Math.exp(logits[offset + t] - max);
        }
        double logSum = max + Math.log(sum);
        double[] out = new double[vocab];
        for (int t = 0; t < vocab; t++) {
            out[t] = logits[offset + t] - logSum;
        }
        return out;
    }

    /** KL(p ‖ q) = Σ p (log p − log q) from log-probabilities; clamped at 0 against rounding. */
    static double klDivergence(double[] logP, double[] logQ) {
        double sum = 0;
        for (int t = 0; t < logP.length; t++) {
            if (logP[t] != Double.NEGATIVE_INFINITY) {
                sum += Math.exp(logP[t]) * (logP[t] - logQ[t]);
            }
        }
        return Math.max(0, sum);
    }

    private static int argmax(double[] values) {
        int best = 0;
        for (int t = 1; t < values.length; t++) {
            if (values[t] > values[best]) {
                best = t;
            }
        }
        return best;
    }

    /** Nearest-rank percentile of ascending {@code sorted}. */
    private static double percentile(double[] sorted, double fraction) {
        int rank = (int) Math.ceil(fraction * sorted.length);
        return sorted[Math.clamp(rank - 1, 0, sorted.length - 1)];
    }
}
