package io.zse.generate;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.IncrementalDecoder;
import io.zse.tokenizer.Tokenizer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/** One generation: prefill the prompt, then sample token by token until EOS, max tokens or a stop string. */
public final class Generator {
    private final LlamaModel model;
    private final Tokenizer tokenizer;
    private final Set<Integer> eosIds;
    private final KvCacheType kvCacheType;

    /** A generator with an F32 KV cache. */
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
        if (promptIds.length == 0) {
            throw new IllegalArgumentException("the prompt is empty");
        }
        int context = model.config().contextLength();
        if (promptIds.length >= context) {
            throw new IllegalArgumentException("the prompt has " + promptIds.length + " tokens; the model's context is "
                    + context);
        }
        int budget = Math.min(maxTokens, context - promptIds.length);
        KvCache cache = model.newCache(promptIds.length + budget, kvCacheType);
        Sampler sampler = new Sampler(parameters, seed);
        IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(true);
        StopMatcher matcher = new StopMatcher(stops);
        StringBuilder text = new StringBuilder();
        List<Integer> ids = new ArrayList<>();
        List<Sampler.Choice> choices = new ArrayList<>();
        int[] history = promptIds.clone();
        float[] logits = model.forward(promptIds, 0, cache);
        String finish = "length";
        while (ids.size() < budget) {
            Sampler.Choice choice = sampler.sample(logits, history);
            if (eosIds.contains(choice.token())) {
                finish = "stop";
                break;
            }
            ids.add(choice.token());
            choices.add(choice);
            emit(matcher.append(decoder.next(choice.token())), text, onText);
            if (matcher.stopped()) {
                finish = "stop";
                break;
            }
            history = append(history, choice.token());
            if (ids.size() < budget) {
                logits = model.forward(new int[]{choice.token()}, history.length - 1, cache);
            }
        }
        if (!matcher.stopped()) {
            emit(matcher.append(decoder.flush()), text, onText);
            emit(matcher.flush(), text, onText);
        }
        return new Result(promptIds, ids.stream().mapToInt(Integer::intValue).toArray(), text.toString(), finish,
                choices);
    }

    private static void emit(String piece, StringBuilder text, Consumer<String> onText) {
        if (!piece.isEmpty()) {
            text.append(piece);
            onText.accept(piece);
        }
    }

    private static int[] append(int[] history, int token) {
        int[] next = java.util.Arrays.copyOf(history, history.length + 1);
        next[history.length] = token;
        return next;
    }
}
