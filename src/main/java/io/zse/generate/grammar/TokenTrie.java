package io.zse.generate.grammar;

import io.zse.tokenizer.TokenBytes;
import io.zse.tokenizer.Tokenizer;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Every token's bytes in one prefix tree, laid out in depth-first order with a skip pointer per node: finding the
 * tokens a grammar state allows is one forward scan that jumps over each subtree whose prefix the grammar refuses, so
 * a byte shared by ten thousand tokens is checked once. Built once per tokenizer (a second for a 150K vocabulary).
 */
public final class TokenTrie {
    private static final Map<Tokenizer, TokenTrie> CACHE = new WeakHashMap<>();

    private final byte[][] tokenBytes;
    private final byte[] label;      // [nodes] the byte on the edge into the node
    private final int[] depth;       // [nodes] 1 for the root's children
    private final int[] skip;        // [nodes] the index after the node's subtree
    private final int[] tokensFrom;  // [nodes + 1] tokens ending at node i: tokens[tokensFrom[i] .. tokensFrom[i+1])
    private final int[] tokens;
    private final int maxDepth;
    private final boolean[] singleByte = new boolean[256];

    private TokenTrie(byte[][] tokenBytes) {
        this.tokenBytes = tokenBytes;
        Integer[] order = java.util.stream.IntStream.range(0, tokenBytes.length)
                .filter(id -> tokenBytes[id] != null && tokenBytes[id].length > 0).boxed().toArray(Integer[]::new);
        Arrays.sort(order, (a, b) -> Arrays.compareUnsigned(tokenBytes[a], tokenBytes[b]));
        int capacity = 0;
        int longest = 0;
        for (int id : order) {
            capacity += tokenBytes[id].length;
            longest = Math.max(longest, tokenBytes[id].length);
            if (tokenBytes[id].length == 1) {
                singleByte[tokenBytes[id][0] & 0xFF] = true;
            }
        }
        byte[] labels = new byte[capacity];
        int[] depths = new int[capacity];
        int[] skips = new int[capacity];
        int[] endNode = new int[order.length];
        int[] path = new int[longest + 1]; // path[d] = node at depth d on the current branch
        int nodes = 0;
        byte[] previous = new byte[0];
        for (int i = 0; i < order.length; i++) {
            byte[] bytes = tokenBytes[order[i]];
            int common = Arrays.mismatch(previous, bytes);
            common = common < 0 ? bytes.length : Math.min(common, Math.min(previous.length, bytes.length));
            for (int d = previous.length; d > common; d--) {
                skips[path[d]] = nodes; // the branch below depth common is finished
            }
            for (int d = common + 1; d <= bytes.length; d++) {
                labels[nodes] = bytes[d - 1];
                depths[nodes] = d;
                path[d] = nodes++;
            }
            endNode[i] = path[bytes.length];
            previous = bytes;
        }
        for (int d = previous.length; d > 0; d--) {
            skips[path[d]] = nodes;
        }
        this.label = Arrays.copyOf(labels, nodes);
        this.depth = Arrays.copyOf(depths, nodes);
        this.skip = Arrays.copyOf(skips, nodes);
        this.maxDepth = longest;
        this.tokensFrom = new int[nodes + 1];
        for (int n : endNode) {
            tokensFrom[n + 1]++;
        }
        for (int n = 0; n < nodes; n++) {
            tokensFrom[n + 1] += tokensFrom[n];
        }
        this.tokens = new int[order.length];
        int[] fill = Arrays.copyOf(tokensFrom, nodes);
        for (int i = 0; i < order.length; i++) {
            tokens[fill[endNode[i]]++] = order[i];
        }
    }

    /** The trie of a tokenizer's text tokens, built on first use and kept while the tokenizer lives. */
    public static TokenTrie of(Tokenizer tokenizer) {
        synchronized (CACHE) {
            return CACHE.computeIfAbsent(tokenizer, t -> new TokenTrie(TokenBytes.of(t)));
        }
    }

    /** The bytes token {@code id} writes; null for special tokens. */
    public byte[] bytes(int id) {
        return id >= 0 && id < tokenBytes.length ? tokenBytes[id] : null;
    }

    public int vocabSize() {
        return tokenBytes.length;
    }

    /** The byte has a token of its own, so any text made of such bytes can be written one token at a time. */
    public boolean writesByteAlone(int b) {
        return singleByte[b & 0xFF];
    }

    /**
     * Sets in {@code allowed} every token whose bytes the grammar accepts from {@code state}, and (when
     * {@code budgetBytes} >= 0) that leave a completion of at most that many bytes.
     *
     * @return the longest completion an allowed token leaves, in bytes (0 when none is allowed)
     */
    public int allowedTokens(GrammarState state, int budgetBytes, BitSet allowed) {
        int[] longestCompletion = {0};
        walk(state, (completion, length, from, to) -> {
            if (budgetBytes < 0 || completion <= budgetBytes) {
                longestCompletion[0] = Math.max(longestCompletion[0], completion);
                set(from, to, allowed);
            }
        });
        return longestCompletion[0];
    }

    /**
     * Sets in {@code allowed} the longest tokens that begin one of the shortest completions from {@code state}: the
     * way to finish in the fewest tokens as far as one token's choice can tell, for a budget too short to write a
     * byte a token. None when the vocabulary has no token on a shortest completion.
     */
    public void fastestTokens(GrammarState state, BitSet allowed) {
        int shortest = state.minBytesToFinish();
        int[] longest = {0};
        walk(state, (completion, length, from, to) -> {
            if (completion + length == shortest) {
                longest[0] = Math.max(longest[0], length);
            }
        });
        walk(state, (completion, length, from, to) -> {
            if (completion + length == shortest && length == longest[0]) {
                set(from, to, allowed);
            }
        });
    }

    /** What {@link #walk} reports: tokens[from..to) spell {@code length} bytes that leave {@code completion} to go. */
    private interface Visitor {
        void tokens(int completion, int length, int from, int to);
    }

    /** Visits every run of tokens whose bytes the grammar accepts from {@code state}, skipping refused subtrees. */
    private void walk(GrammarState state, Visitor visitor) {
        GrammarState[] states = new GrammarState[maxDepth + 1];
        states[0] = state;
        int n = 0;
        while (n < label.length) {
            GrammarState next = states[depth[n] - 1].advance(label[n]);
            if (next == null) {
                n = skip[n];
                continue;
            }
            states[depth[n]] = next;
            if (tokensFrom[n] != tokensFrom[n + 1]) {
                visitor.tokens(next.minBytesToFinish(), depth[n], tokensFrom[n], tokensFrom[n + 1]);
            }
            n++;
        }
    }

    private void set(int from, int to, BitSet allowed) {
        for (int i = from; i < to; i++) {
            allowed.set(tokens[i]);
        }
    }
}
