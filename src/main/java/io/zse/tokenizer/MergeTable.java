package io.zse.tokenizer;

/** BPE merges: (left id, right id) -> (rank, merged id), in an open-addressing table of primitive longs. */
final class MergeTable {
    static final long ABSENT = -1L;

    private final long[] keys;
    private final long[] values;
    private final int mask;
    private final int[][] ranked;

    /** {@code left[r] + right[r] -> merged[r]} is the merge of rank r; a repeated pair keeps its last rank. */
    MergeTable(int[] left, int[] right, int[] merged) {
        int capacity = Integer.highestOneBit(Math.max(4, left.length * 2 + 1)) << 1;
        keys = new long[capacity];
        values = new long[capacity];
        java.util.Arrays.fill(keys, ABSENT);
        mask = capacity - 1;
        ranked = new int[][]{left, right, merged};
        for (int rank = 0; rank < left.length; rank++) {
            long key = key(left[rank], right[rank]);
            int slot = slot(key);
            keys[slot] = key;
            values[slot] = ((long) rank << 32) | (merged[rank] & 0xFFFFFFFFL);
        }
    }

    /** Left ids, right ids and merged ids, indexed by rank (as given to the constructor). */
    int[][] ranked() {
        return ranked;
    }

    /** {@code rank << 32 | mergedId}, or {@link #ABSENT}. */
    long get(int left, int right) {
        long key = key(left, right);
        int slot = slot(key);
        return keys[slot] == key ? values[slot] : ABSENT;
    }

    private static long key(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    private int slot(long key) {
        int slot = (int) (mix(key) & mask);
        while (keys[slot] != ABSENT && keys[slot] != key) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    private static long mix(long key) {
        key ^= key >>> 33;
        key *= 0xff51afd7ed558ccdL;
        key ^= key >>> 33;
        return key;
    }
}
