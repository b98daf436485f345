package io.zse.serve;

import io.zse.generate.EndConditions;
import io.zse.generate.SamplingParameters;
import io.zse.generate.TokenConstraint;

import java.util.List;

/**
 * One sequence to generate.
 *
 * @param promptIds  the tokenized prompt (special tokens included)
 * @param maxTokens  the most tokens to generate; the engine caps it by what the context leaves
 * @param parameters how tokens are chosen
 * @param seed       the sampler's seed
 * @param stops      stop strings (never emitted)
 * @param constraint limits the tokens sampled, step by step (structured output, forced tool calls); null for none
 * @param keepSpecialTokens special tokens appear in the text (tool-call markers that are special tokens)
 * @param logprobs   each step's choice carries its logprob (else the token may be drawn on the device, without one)
 * @param ends       ignore_eos, min_tokens, stop token ids, stop strings kept in the output
 */
public record GenerationRequest(int[] promptIds, int maxTokens, SamplingParameters parameters, long seed,
                                List<String> stops, TokenConstraint constraint, boolean keepSpecialTokens,
                                boolean logprobs, EndConditions ends) {
    public GenerationRequest {
        promptIds = promptIds.clone();
        stops = List.copyOf(stops);
    }

    public GenerationRequest(int[] promptIds, int maxTokens, SamplingParameters parameters, long seed,
                             List<String> stops) {
        this(promptIds, maxTokens, parameters, seed, stops, null, false, false, EndConditions.DEFAULT);
    }
}
