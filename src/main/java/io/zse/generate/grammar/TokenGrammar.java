package io.zse.generate.grammar;

import io.zse.generate.TokenConstraint;

import java.util.BitSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A grammar bound to a tokenizer's {@link TokenTrie}: hands out one {@link TokenConstraint} per sequence and keeps
 * the token masks of the states they visit, shared between them (inside a string, every step is the same state, so a
 * long string costs one trie scan).
 */
public final class TokenGrammar {
    private static final int MAX_CACHED_MASKS = 512;

    private final TokenTrie trie;
    private final GrammarState start;
    private final Map<GrammarState, Mask> masks = new ConcurrentHashMap<>();

    /** The tokens a state allows, and the longest completion (in bytes) any of them leaves. */
    private record Mask(BitSet allowed, int longestCompletion) {
    }

    public TokenGrammar(GrammarNode root, TokenTrie trie) {
        this.trie = trie;
        this.start = GrammarState.start(root);
    }

    /**
     * A printable ASCII byte with no token of its own, or -1. JSON's punctuation, digits and keywords are printable
     * ASCII: a vocabulary with a token for each can write any output one byte at a time, and so always finish one.
     */
    public int missingByte() {
        for (int b = 0x20; b < 0x7F; b++) {
            if (!trie.writesByteAlone(b)) {
                return b;
            }
        }
        return -1;
    }

    /** The fewest bytes of any output. */
    public int minBytes() {
        return start.minBytesToFinish();
    }

    /**
     * @param endTokens    end-of-sequence ids, allowed once the output is complete
     * @param prefixTokens special tokens forced before the grammar's text (a tool-call marker); may be empty
     */
    public TokenConstraint newConstraint(Set<Integer> endTokens, int[] prefixTokens) {
        return new Constraint(endTokens, prefixTokens.clone());
    }

    /** The tokens allowed from {@code state} that leave a completion of at most {@code budgetBytes} (-1: any). */
    BitSet mask(GrammarState state, int budgetBytes) {
        Mask cached = masks.get(state);
        if (cached == null) {
            BitSet allowed = new BitSet(trie.vocabSize());
            cached = new Mask(allowed, trie.allowedTokens(state, -1, allowed));
            if (masks.size() >= MAX_CACHED_MASKS) {
                masks.clear();
            }
            masks.put(state, cached);
        }
        if (budgetBytes < 0 || cached.longestCompletion() <= budgetBytes) {
            return cached.allowed(); // the budget refuses none of them: the usual case, until the last few tokens
        }
        BitSet allowed = new BitSet(trie.vocabSize());
        trie.allowedTokens(state, budgetBytes, allowed);
        return allowed;
    }

    private final class Constraint implements TokenConstraint {
        private final Set<Integer> endTokens;
        private final int[] prefix;
        private int prefixDone;
        private GrammarState state = start;

        Constraint(Set<Integer> endTokens, int[] prefix) {
            this.endTokens = Set.copyOf(endTokens);
            this.prefix = prefix;
        }

        @Override
        public BitSet allowed(int remainingTokens) {
            if (prefixDone < prefix.length) {
                BitSet only = new BitSet();
                only.set(prefix[prefixDone]);
                return only;
            }
            // a byte per token is always possible, so leaving the completion's bytes within the tokens left after
            // this one guarantees the output completes before the budget runs out
            BitSet allowed = mask(state, remainingTokens - 1);
            if (allowed.isEmpty() && !state.accepts()) {
                // too few tokens left at a byte each: finish the fastest way longer tokens allow, else write on
                allowed = new BitSet(trie.vocabSize());
                trie.fastestTokens(state, allowed);
                if (allowed.isEmpty()) {
                    allowed = mask(state, -1);
                }
            }
            if (state.accepts() && !endTokens.isEmpty()) {
                allowed = (BitSet) allowed.clone();
                endTokens.forEach(allowed::set);
            }
            return allowed;
        }

        @Override
        public void accept(int token) {
            if (prefixDone < prefix.length) {
                if (token != prefix[prefixDone]) {
                    throw new IllegalArgumentException("token " + token + " is not the forced token " + prefix[prefixDone]);
                }
                prefixDone++;
                return;
            }
            byte[] bytes = trie.bytes(token);
            GrammarState next = bytes == null ? null : state.advance(bytes);
            if (next == null) {
                throw new IllegalArgumentException("token " + token + " does not continue the grammar");
            }
            state = next;
        }

        @Override
        public boolean complete() {
            return prefixDone == prefix.length && state.complete();
        }
    }
}
