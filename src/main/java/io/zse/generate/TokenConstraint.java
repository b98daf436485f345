package io.zse.generate;

import java.util.BitSet;

/**
 * Limits which tokens a sequence may sample next (structured output, forced tool calls). The decoder asks before each
 * token and reports the token it chose; one instance per sequence, used from one thread.
 */
public interface TokenConstraint {
    /**
     * The token ids that may come next, end-of-sequence ids included when the output may end here. The caller must not
     * modify the set.
     *
     * @param remainingTokens the tokens the sequence may still generate, this one included
     */
    BitSet allowed(int remainingTokens);

    /** The token the sequence chose (one {@link #allowed} returned). */
    void accept(int token);

    /** The output is complete and nothing may follow: the sequence ends here. */
    boolean complete();
}
