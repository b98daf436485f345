package io.zse.backend;

/**
 * The chained hash that names a full block of prompt tokens in the prefix cache: it covers the block's tokens and,
 * through the parent hash, every token before them, so equal hashes mean equal prefixes (the pool also compares the
 * tokens and parent of a hit, so a 64-bit collision cannot hand out the wrong keys and values).
 */
public final class PrefixHash {
    /** The parent of a sequence's first block. */
    public static final long ROOT = 0x9E3779B97F4A7C15L;

    private PrefixHash() {
    }

    /**
     * The parent of the first block of a sequence whose keys are rotated in variant {@code rotation} (0: the model's
     * only way; others never share blocks with it, nor with each other).
     */
    public static long root(int rotation) {
        return rotation == 0 ? ROOT : mix(ROOT ^ mix(rotation));
    }

    public static long next(long parent, int[] tokens) {
        long h = mix(parent ^ tokens.length);
        for (int token : tokens) {
            h = mix(h ^ (token & 0xFFFFFFFFL));
        }
        return h;
    }

    /** SplitMix64's finalizer: every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
