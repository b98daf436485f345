package io.zse.generate;

import java.util.Set;

/**
 * When a sequence may and must end, beyond its token budget (vLLM's SamplingParams of the same names).
 *
 * @param ignoreEos          end-of-sequence tokens (and the end marker spelled out) do not end the sequence
 * @param minTokens          end-of-sequence and stop token ids cannot be sampled, and stop strings are not looked
 *                           for, until this many tokens are generated
 * @param stopTokenIds       sampling one of these ends the sequence ("stop"); its text is left out of the output
 * @param includeStopStrings a matched stop string (or stop token's text) stays at the end of the output
 */
public record EndConditions(boolean ignoreEos, int minTokens, Set<Integer> stopTokenIds,
                            boolean includeStopStrings) {
    public static final EndConditions DEFAULT = new EndConditions(false, 0, Set.of(), false);

    public EndConditions {
        if (minTokens < 0) {
            throw new IllegalArgumentException("min_tokens must be >= 0, not " + minTokens);
        }
        stopTokenIds = Set.copyOf(stopTokenIds);
    }
}
