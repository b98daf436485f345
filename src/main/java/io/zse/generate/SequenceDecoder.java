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
    private final EndConditions ends;
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
        this(tokenizer, eosIds, promptIds, budget, parameters, seed, stops, null, false, EndConditions.DEFAULT);
    }

    /**
     * @param constraint        limits the tokens that may be sampled (null: none)
     * @param keepSpecialTokens special tokens appear in the text (a tool-call marker the caller parses)
     * @param ends              ignore_eos, min_tokens, stop token ids, stop strings kept in the output
     */
    public SequenceDecoder(Tokenizer tokenizer, Set<Integer> eosIds, int[] promptIds, int budget,
                           SamplingParameters parameters, long seed, List<String> stops, TokenConstraint constraint,
                           boolean keepSpecialTokens, EndConditions ends) {
        if (budget <= 0) {
            throw new IllegalArgumentException("the token budget must be positive, not " + budget);
        }
        this.eosIds = Set.copyOf(eosIds);
        this.budget = budget;
        this.sampler = new Sampler(parameters, seed);
        this.decoder = tokenizer.newIncrementalDecoder(!keepSpecialTokens, promptIds);
        // with ignore_eos the end marker spelled out does not end the sequence either
        this.matcher = new StopMatcher(ends.ignoreEos() ? stops : withEndMarkers(stops, tokenizer, eosIds),
                ends.includeStopStrings() ? Set.copyOf(stops) : Set.of());
        this.constraint = constraint;
        this.ends = ends;
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
        float[] row = logits;
        int at = offset;
        if (constraint != null) {
            BitSet allowed = constraint.allowed(budget - generated);
            if (allowed.isEmpty()) {
                return finish("stop", null, ""); // nothing can continue the output (the caller checks this cannot happen)
            }
            row = masked(logits, offset, vocab, allowed);
            at = 0;
        }
        if (endsBlocked()) {
            row = withoutEnds(row, at, vocab);
            at = 0;
        }
        return advance(sampler.sample(row, at, vocab, history, promptLength));
    }

    /**
     * Whether this step's token may be drawn on the device (no constraint, no penalty, no alternatives wanted); if so,
     * its {@value Sampler#DEVICE_PARAMETERS} sampling parameters are written at {@code parameters[at..]} (see
     * {@link Sampler#deviceDraw}) and the token comes back through {@link #next(int)}, or, should the device hand the
     * row back, its logits through {@link #next(float[], int, int)}.
     */
    public boolean deviceDraw(double[] parameters, int at) {
        if (finish != null || constraint != null || endsBlocked() || !sampler.drawableOnDevice(history, promptLength)) {
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
        if (eosIds.contains(choice.token()) && !ends.ignoreEos()) {
            return finish("stop", null, "");
        }
        generated++;
        history = Arrays.copyOf(history, history.length + 1);
        history[history.length - 1] = choice.token();
        if (ends.stopTokenIds().contains(choice.token())) {
            // vLLM counts the stop token as generated but leaves its text out unless include_stop_str_in_output
            String text = ends.includeStopStrings() ? matcher.pass(decoder.next(choice.token())) : "";
            return finish("stop", choice, text);
        }
        String piece = decoder.next(choice.token());
        // vLLM looks for stop strings only once the output is longer than min_tokens
        String text = generated <= ends.minTokens() ? matcher.pass(piece) : matcher.append(piece);
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

    /** min_tokens is not reached yet: end-of-sequence and stop token ids may not be sampled. */
    private boolean endsBlocked() {
        return generated < ends.minTokens();
    }

    /** The row with the end-of-sequence and stop token ids at the lowest finite logit (into {@link #masked}). */
    private float[] withoutEnds(float[] row, int offset, int vocab) {
        if (row != masked) {
            if (masked == null) {
                masked = new float[vocab];
            }
            System.arraycopy(row, offset, masked, 0, vocab);
        }
        for (Set<Integer> ids : List.of(eosIds, ends.stopTokenIds())) {
            for (int id : ids) {
                if (id >= 0 && id < vocab) {
                    masked[id] = -Float.MAX_VALUE;
                }
            }
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
