package io.zse.serve;

import io.zse.generate.SamplingParameters;

import java.util.List;

/**
 * One sequence to generate.
 *
 * @param promptIds  the tokenized prompt (special tokens included)
 * @param maxTokens  the most tokens to generate; the engine caps it by what the context leaves
 * @param parameters how tokens are chosen
 * @param seed       the sampler's seed
 * @param stops      stop strings (never emitted)
 */
public record GenerationRequest(int[] promptIds, int maxTokens, SamplingParameters parameters, long seed,
                                List<String> stops) {
    public GenerationRequest {
        promptIds = promptIds.clone();
        stops = List.copyOf(stops);
    }
}
