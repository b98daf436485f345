package io.zse.generate;

import io.zse.tokenizer.IncrementalDecoder;
import io.zse.tokenizer.Tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
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
    private int[] history; // prompt + generated: what the penalties count
    private int generated;
    private String finish;

    /**
     * @param budget the most tokens this sequence may generate (> 0)
     */
    public SequenceDecoder(Tokenizer tokenizer, Set<Integer> eosIds, int[] promptIds, int budget,
                           SamplingParameters parameters, long seed, List<String> stops) {
        if (budget <= 0) {
            throw new IllegalArgumentException("the token budget must be positive, not " + budget);
        }
        this.eosIds = Set.copyOf(eosIds);
        this.budget = budget;
        this.sampler = new Sampler(parameters, seed);
        this.decoder = tokenizer.newIncrementalDecoder(true);
        this.matcher = new StopMatcher(withEndMarkers(stops, tokenizer, eosIds));
        this.history = promptIds.clone();
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
        Sampler.Choice choice = sampler.sample(logits, offset, vocab, history);
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
        if (generated >= budget) {
            return finish("length", choice, text);
        }
        return new Step(choice, text, null);
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
