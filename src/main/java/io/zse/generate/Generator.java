package io.zse.generate;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/** One generation on the calling thread: prefill the prompt, then decode token by token with a {@link SequenceDecoder}. */
public final class Generator {
    private final LlamaModel model;
    private final Tokenizer tokenizer;
    private final Set<Integer> eosIds;
    private final KvCacheType kvCacheType;

    /** Generates with an F32 KV cache. */
    public Generator(LlamaModel model, Tokenizer tokenizer, List<Integer> eosIds) {
        this(model, tokenizer, eosIds, KvCacheType.F32);
    }

    /**
     * @param eosIds      every id that ends generation (config and generation_config merged at convert time)
     * @param kvCacheType how each generation's KV cache stores keys and values
     */
    public Generator(LlamaModel model, Tokenizer tokenizer, List<Integer> eosIds, KvCacheType kvCacheType) {
        this.model = model;
        this.tokenizer = tokenizer;
        this.eosIds = new HashSet<>(eosIds);
        this.kvCacheType = kvCacheType;
    }

    /** What was generated; finishReason is "stop" (EOS or stop string) or "length". */
    public record Result(int[] promptIds, int[] ids, String text, String finishReason, List<Sampler.Choice> choices) {
    }

    /**
     * @param onText receives the text as it becomes final (UTF-8 complete, never part of a stop string)
     */
    public Result generate(int[] promptIds, int maxTokens, SamplingParameters parameters, long seed,
                           List<String> stops, Consumer<String> onText) {
        return generate(promptIds, maxTokens, parameters, seed, stops, onText, () -> false);
    }

    /**
     * As {@link #generate(int[], int, SamplingParameters, long, List, Consumer)}, stopping between two tokens once
     * {@code stopRequested} says so (an interactive user's Ctrl-C): the finish reason is then "cancelled".
     */
    public Result generate(int[] promptIds, int maxTokens, SamplingParameters parameters, long seed,
                           List<String> stops, Consumer<String> onText, BooleanSupplier stopRequested) {
        int budget = tokenBudget(promptIds.length, maxTokens, model.config().contextLength());
        KvCache cache = model.newCache(promptIds.length + budget, kvCacheType);
        SequenceDecoder sequence = new SequenceDecoder(tokenizer, eosIds, promptIds, budget, parameters, seed, stops);
        StringBuilder text = new StringBuilder();
        List<Sampler.Choice> choices = new ArrayList<>();
        float[] logits = model.forward(promptIds, 0, cache);
        while (true) {
            SequenceDecoder.Step step = sequence.next(logits);
            if (step.choice() != null) {
                choices.add(step.choice());
            }
            if (!step.text().isEmpty()) {
                text.append(step.text());
                onText.accept(step.text());
            }
            if (step.finished() || stopRequested.getAsBoolean()) {
                return new Result(promptIds, sequence.generatedIds(), text.toString(),
                        step.finished() ? step.finish() : "cancelled", choices);
            }
            logits = model.forward(new int[]{sequence.lastToken()}, cache.length(), cache);
        }
    }

    /**
     * How many tokens a prompt of {@code promptTokens} may generate: {@code maxTokens} capped by what the context
     * leaves. Rejects an empty prompt or one that fills the context.
     */
    public static int tokenBudget(int promptTokens, int maxTokens, int contextLength) {
        if (promptTokens == 0) {
            throw new IllegalArgumentException("the prompt is empty");
        }
        if (promptTokens >= contextLength) {
            throw new IllegalArgumentException("the prompt has " + promptTokens + " tokens; the model's context is "
                    + contextLength);
        }
        if (maxTokens <= 0) {
            throw new IllegalArgumentException("max tokens must be positive, not " + maxTokens);
        }
        return Math.min(maxTokens, contextLength - promptTokens);
    }
}
