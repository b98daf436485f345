package io.zse.generate;

import io.zse.tokenizer.IncrementalDecoder;
import io.zse.tokenizer.Tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Set;

/**
 * The per-sequence half of generation, independent of how logits are computed: given the logits for the next
 * position it samples a token, decodes it incrementally (UTF-8-safe), holds back possible stop strings and decides
 * when the sequence is done. The CLI {@link Generator} and the serving engine both drive one of these per sequence.
 */
public final class SequenceDecoder {
    /**
     * What one step produced.
     *
     * @param choice the sampled token with its logprobs; null when the step ended on an end-of-sequence id
     * @param text   text that became final in this step (may be "", never part of a stop string)
     * @param finish null while the sequence goes on, else "stop" (EOS or stop string) or "length"
     */
    public record Step(Sampler.Choice choice, String text, String finish) {
        public boolean finished() {
            return finish != null;
        }
    }

    private final Set<Integer> eosIds;
    private final int budget;
    private final Sampler sampler;
    private final IncrementalDecoder decoder;
    private final StopMatcher matcher;
    private final TokenConstraint constraint; // null: any token
    private float[] masked;
    private int[] history; // prompt + generated: what the penalties count
    private final int promptLength;
    private int generated;
    private String finish;

    /**
     * @param budget the most tokens this sequence may generate (> 0)
     */
    public SequenceDecoder(Tokenizer tokenizer, Set<Integer> eosIds, int[] promptIds, int budget,
                           SamplingParameters parameters, long seed, List<String> stops) {
        this(tokenizer, eosIds, promptIds, budget, parameters, seed, stops, null, false);
    }

    /**
     * @param constraint        limits the tokens that may be sampled (null: none)
     * @param keepSpecialTokens special tokens appear in the text (a tool-call marker the caller parses)
     */
    public SequenceDecoder(Tokenizer tokenizer, Set<Integer> eosIds, int[] promptIds, int budget,
                           SamplingParameters parameters, long seed, List<String> stops, TokenConstraint constraint,
                           boolean keepSpecialTokens) {
        if (budget <= 0) {
            throw new IllegalArgumentException("the token budget must be positive, not " + budget);
        }
        this.eosIds = Set.copyOf(eosIds);
        this.budget = budget;
        this.sampler = new Sampler(parameters, seed);
        this.decoder = tokenizer.newIncrementalDecoder(!keepSpecialTokens, promptIds);
        this.matcher = new StopMatcher(withEndMarkers(stops, tokenizer, eosIds));
        this.constraint = constraint;
        this.history = promptIds.clone();
        this.promptLength = promptIds.length;
    }

    /**
     * The stop strings plus the text of each end-of-sequence token: a small model may spell its end marker out as
     * plain tokens (the TinyStories demo writes {@code <|end_story|>} piece by piece), and that must end it too.
     */
    static List<String> withEndMarkers(List<String> stops, Tokenizer tokenizer, Set<Integer> eosIds) {
        List<String> all = new ArrayList<>(stops);
        for (int id : eosIds) {
            String marker = id >= 0 && id < tokenizer.vocabSize() ? tokenizer.decode(new int[]{id}, false) : "";
            if (!marker.isBlank() && !all.contains(marker)) {
                all.add(marker);
            }
        }
        return all;
    }

    /** Takes the logits [vocab] for the next position and returns what that step produced. */
    public Step next(float[] logits) {
        return next(logits, 0, logits.length);
    }

    /** Takes its row logits[offset .. offset + vocab) of a batch's logits (read in place where sampling allows). */
    public Step next(float[] logits, int offset, int vocab) {
        if (finish != null) {
            throw new IllegalStateException("the sequence has already finished (" + finish + ")");
        }
        Sampler.Choice choice;
        if (constraint == null) {
            choice = sampler.sample(logits, offset, vocab, history, promptLength);
        } else {
            BitSet allowed = constraint.allowed(budget - generated);
            if (allowed.isEmpty()) {
                return finish("stop", null, ""); // nothing can continue the output (the caller checks this cannot happen)
            }
            choice = sampler.sample(masked(logits, offset, vocab, allowed), 0, vocab, history,
                    promptLength);
        }
        return advance(choice);
    }

    /**
     * Whether this step's token may be drawn on the device (no constraint, no penalty, no alternatives wanted); if so,
     * its {@value Sampler#DEVICE_PARAMETERS} sampling parameters are written at {@code parameters[at..]} (see
     * {@link Sampler#deviceDraw}) and the token comes back through {@link #next(int)}, or, should the device hand the
     * row back, its logits through {@link #next(float[], int, int)}.
     */
    public boolean deviceDraw(double[] parameters, int at) {
        if (finish != null || constraint != null || !sampler.drawableOnDevice(history, promptLength)) {
            return false;
        }
        sampler.deviceDraw(parameters, at);
        return true;
    }

    /** Takes the token the device drew for this step (after {@link #deviceDraw}). */
    public Step next(int token) {
        if (finish != null) {
            throw new IllegalStateException("the sequence has already finished (" + finish + ")");
        }
        return advance(sampler.drawn(token));
    }

    /** Appends the chosen token and decides whether the sequence goes on. */
    private Step advance(Sampler.Choice choice) {
        if (eosIds.contains(choice.token())) {
            return finish("stop", null, "");
        }
        generated++;
        history = Arrays.copyOf(history, history.length + 1);
        history[history.length - 1] = choice.token();
        String text = matcher.append(decoder.next(choice.token()));
        if (matcher.stopped()) {
            finish = "stop";
            return new Step(choice, text, finish);
        }
        if (constraint != null) {
            constraint.accept(choice.token());
            if (constraint.complete()) {
                return finish("stop", choice, text);
            }
        }
        if (generated >= budget) {
            return finish("length", choice, text);
        }
        return new Step(choice, text, null);
    }

    /**
     * The row with every token the constraint refuses at the lowest finite logit: never sampled, and the logprobs
     * reported stay finite JSON numbers.
     */
    private float[] masked(float[] logits, int offset, int vocab, BitSet allowed) {
        if (masked == null) {
            masked = new float[vocab];
        }
        Arrays.fill(masked, -Float.MAX_VALUE);
        for (int t = allowed.nextSetBit(0); t >= 0 && t < vocab; t = allowed.nextSetBit(t + 1)) {
            masked[t] = logits[offset + t];
        }
        return masked;
    }

    /** Prompt and generated tokens so far: what the model has run, and {@link #lastToken()} that it runs next. */
    public int[] tokens() {
        return history.clone();
    }

    /** The token the model must run next (the last one sampled). */
    public int lastToken() {
        return history[history.length - 1];
    }

    /** Tokens generated so far (the end-of-sequence id is not counted). */
    public int generatedTokens() {
        return generated;
    }

    public boolean finished() {
        return finish != null;
    }

    private Step finish(String reason, Sampler.Choice choice, String text) {
        finish = reason;
        // held-back text is released: the decoder's trailing bytes, then what the stop matcher was still deciding on
        String tail = matcher.append(decoder.flush());
        if (!matcher.stopped()) {
            tail += matcher.flush();
        }
        return new Step(choice, text + tail, reason);
    }

    /** The generated ids of a finished or running sequence (without the prompt). */
    public int[] generatedIds() {
        return Arrays.copyOfRange(history, history.length - generated, history.length);
    }
}
