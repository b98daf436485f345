package io.zse.generate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Chooses the next token from a logits row: penalties, then temperature, top-k, top-p and min-p, then a draw from a
 * seeded {@link SplittableRandom} (the same seed and inputs give the same tokens). One sampler per sequence.
 */
public final class Sampler {
    /** A token and its log-probability under the model (log-softmax of the raw logits, before any processing). */
    public record TokenLogprob(int token, float logprob) {
    }

    /** The chosen token, its logprob, and the {@code topLogprobs} most likely tokens, most likely first. */
    public record Choice(int token, float logprob, List<TokenLogprob> top) {
    }

    /** Values per row of {@link #deviceDraw}: temperature, top-k, top-p, min-p and the uniform draw. */
    public static final int DEVICE_PARAMETERS = 5;

    private final SamplingParameters parameters;
    private final SplittableRandom random;
    private double drawn = Double.NaN; // a uniform taken by deviceDraw and not yet used by a host draw

    public Sampler(SamplingParameters parameters, long seed) {
        this.parameters = parameters;
        this.random = new SplittableRandom(seed);
    }

    /**
     * @param logits  [vocab], not modified
     * @param history the tokens generated so far, which every penalty counts
     */
    public Choice sample(float[] logits, int[] history) {
        return sample(logits, 0, logits.length, history, 0);
    }

    /**
     * Samples from the row logits[offset .. offset + vocab) of a batch's logits, not modified. Greedy decoding without
     * penalties reads the row in place; only penalties and random draws work on a copy.
     *
     * @param history      the prompt, then the tokens generated so far
     * @param promptLength how many of history are the prompt's: the repetition penalty counts them (as transformers and
     *                     vLLM do), the presence and frequency penalties only what was generated (OpenAI's definition)
     */
    public Choice sample(float[] logits, int offset, int vocab, int[] history, int promptLength) {
        int token;
        if (parameters.isGreedy() && !penalized(history, promptLength)) {
            token = argmax(logits, offset, vocab);
        } else {
            float[] processed = Arrays.copyOfRange(logits, offset, offset + vocab);
            applyPenalties(processed, history, promptLength);
            token = parameters.isGreedy() ? argmax(processed, 0, vocab) : draw(processed);
        }
        double logNormalizer = logSumExp(logits, offset, vocab);
        return new Choice(token, (float) (logits[offset + token] - logNormalizer),
                top(logits, offset, vocab, logNormalizer, parameters.topLogprobs()));
    }

    /**
     * How likely the model found a token it did not choose (a prompt token, for prompt logprobs): its logprob in the
     * row logits[offset .. offset + vocab), with the {@code topLogprobs} most likely tokens there.
     */
    public static Choice score(float[] logits, int offset, int vocab, int token, int topLogprobs) {
        double logNormalizer = logSumExp(logits, offset, vocab);
        return new Choice(token, (float) (logits[offset + token] - logNormalizer),
                top(logits, offset, vocab, logNormalizer, topLogprobs));
    }

    /**
     * Whether a device may choose this step's token from the raw logits row: no penalty applies and no alternatives
     * are reported (what a device draw gives is the token alone).
     */
    public boolean drawableOnDevice(int[] history, int promptLength) {
        return parameters.topLogprobs() == 0 && !penalized(history, promptLength);
    }

    /**
     * Writes this step's {@value #DEVICE_PARAMETERS} device sampling parameters at {@code parameters[at..]}:
     * temperature (0: argmax), top-k, top-p, min-p and the uniform in [0, 1) the draw uses, taken from this sampler's
     * generator exactly as a host draw takes it, so a seeded run gives the same tokens wherever each step is drawn.
     * Should the device hand the row back, the next {@link #sample} uses that same uniform.
     */
    public void deviceDraw(double[] parameters, int at) {
        double u = 0;
        if (!this.parameters.isGreedy()) {
            u = Double.isNaN(drawn) ? random.nextDouble() : drawn;
            drawn = u;
        }
        parameters[at] = this.parameters.temperature();
        parameters[at + 1] = this.parameters.topK();
        parameters[at + 2] = this.parameters.topP();
        parameters[at + 3] = this.parameters.minP();
        parameters[at + 4] = u;
    }

    /** The choice of a token drawn on the device: no logprobs (the request asked for none). */
    public Choice drawn(int token) {
        drawn = Double.NaN;
        return new Choice(token, Float.NaN, List.of());
    }

    private boolean penalized(int[] history, int promptLength) {
        return parameters.repetitionPenalty() != 1 && history.length > 0
                || (parameters.presencePenalty() != 0 || parameters.frequencyPenalty() != 0)
                && history.length > promptLength;
    }

    private void applyPenalties(float[] logits, int[] history, int promptLength) {
        if (!penalized(history, promptLength)) {
            return;
        }
        // the work follows the history's length, not the vocabulary's: the repetition penalty once per token that
        // occurs at all, then presence and frequency per distinct generated token (a token's order of the two holds)
        float repetition = (float) parameters.repetitionPenalty();
        if (repetition != 1f) {
            BitSet seen = new BitSet(logits.length);
            for (int t : history) {
                seen.set(t);
            }
            for (int t = seen.nextSetBit(0); t >= 0; t = seen.nextSetBit(t + 1)) {
                logits[t] = logits[t] > 0 ? logits[t] / repetition : logits[t] * repetition;
            }
        }
        int[] generated = Arrays.copyOfRange(history, Math.min(promptLength, history.length), history.length);
        Arrays.sort(generated);
        for (int i = 0, run; i < generated.length; i += run) {
            run = 1;
            while (i + run < generated.length && generated[i + run] == generated[i]) {
                run++;
            }
            logits[generated[i]] -= (float) (parameters.presencePenalty() + parameters.frequencyPenalty() * run);
        }
    }

    /** Temperature, then the truncations, then one draw proportional to the remaining probabilities. */
    private int draw(float[] logits) {
        double max = logits[argmax(logits)];
        double[] probabilities = new double[logits.length];
        for (int t = 0; t < logits.length; t++) {
            probabilities[t] = Math.exp((logits[t] - max) / parameters.temperature());
        }
        int[] candidates = truncate(probabilities);
        double total = 0;
        for (int t : candidates) {
            total += probabilities[t];
        }
        double u = Double.isNaN(drawn) ? random.nextDouble() : drawn;
        drawn = Double.NaN;
        double target = u * total;
        for (int t : candidates) {
            target -= probabilities[t];
            if (target < 0) {
                return t;
            }
        }
        return candidates[candidates.length - 1];
    }

    /** The tokens top-k, top-p and min-p keep, most likely first ({@code probabilities} unnormalized, max 1). */
    private int[] truncate(double[] probabilities) {
        int[] byProbability = sortedByProbability(probabilities, parameters.minP());
        int keep = byProbability.length;
        if (parameters.topK() > 0) {
            keep = Math.min(keep, parameters.topK());
        }
        if (parameters.topP() < 1) {
            double total = 0;
            for (double p : probabilities) {
                total += p;
            }
            double cumulative = 0;
            for (int i = 0; i < keep; i++) {
                cumulative += probabilities[byProbability[i]] / total;
                if (cumulative >= parameters.topP()) {
                    keep = i + 1;
                    break;
                }
            }
        }
        return Arrays.copyOf(byProbability, keep);
    }

    /** Tokens with probability >= minP · max, most likely first (ties: lower id first). */
    private static int[] sortedByProbability(double[] probabilities, double minP) {
        // The most likely token has probability 1 here, so min-p is a plain threshold; it also shortens the sort.
        long[] keys = new long[probabilities.length];
        int count = 0;
        for (int t = 0; t < probabilities.length; t++) {
            if (probabilities[t] >= minP && probabilities[t] > 0) {
                // Non-negative floats order like their bits; inverted so an ascending sort puts the likeliest first.
                keys[count++] = (long) (Integer.MAX_VALUE - Float.floatToRawIntBits((float) probabilities[t])) << 32 | t;
            }
        }
        Arrays.sort(keys, 0, count);
        int[] tokens = new int[count];
        for (int i = 0; i < count; i++) {
            tokens[i] = (int) keys[i];
        }
        return tokens;
    }

    private static List<TokenLogprob> top(float[] logits, int offset, int vocab, double logNormalizer, int count) {
        int n = Math.min(count, vocab);
        List<TokenLogprob> top = new ArrayList<>(n);
        boolean[] taken = new boolean[n == 0 ? 0 : vocab];
        for (int i = 0; i < n; i++) {
            int best = -1;
            for (int t = 0; t < vocab; t++) {
                if (!taken[t] && (best < 0 || logits[offset + t] > logits[offset + best])) {
                    best = t;
                }
            }
            taken[best] = true;
            top.add(new TokenLogprob(best, (float) (logits[offset + best] - logNormalizer)));
        }
        return top;
    }

    /** The greedy choice: the index of the largest logit (the first, on ties). */
    public static int argmax(float[] logits) {
        return argmax(logits, 0, logits.length);
    }

    /** The index in the row logits[offset .. offset + vocab) of its largest logit (the first, on ties). */
    public static int argmax(float[] logits, int offset, int vocab) {
        int best = 0;
        for (int t = 1; t < vocab; t++) {
            if (logits[offset + t] > logits[offset + best]) {
                best = t;
            }
        }
        return best;
    }

    private static double logSumExp(float[] logits, int offset, int vocab) {
        double max = logits[offset + argmax(logits, offset, vocab)];
        double sum = 0;
        for (int t = 0; t < vocab; t++) {
            sum += Math.exp(logits[offset + t] - max);
        }
        return max + Math.log(sum);
    }
}
