package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The keys and values of one sequence: a block table over a {@link KvBlockPool}, position p living in slot
 * {@code table[p / blockSize] * blockSize + p % blockSize}. Blocks are taken as the sequence grows ({@link #reserve})
 * and given back by {@link #release}; the leading blocks may be shared, read-only, with other sequences whose prompts
 * start the same ({@link #adoptPrefix}). Per layer, {@link #keys} and {@link #values} hold one row of
 * kvDim = numKvHeads * headDim elements per slot.
 */
public final class KvCache {
    /**
     * Positions per block, in the server's pool and in the caches a model makes for itself (generate, bench, eval):
     * a sequence wastes at most 15 positions of its last block, and the prefix cache shares prompts 16 tokens at a
     * time; the attention kernel's speed hardly depends on it (bench/KvBlockSize.java).
     */
    public static final int DEFAULT_BLOCK_SIZE = 16;

    /** {@link #longRopeFrom()} of a sequence nothing has run for yet. */
    public static final int UNDECIDED = -1;

    private final KvBlockPool pool;
    private final int capacity;
    private final int blockSize;
    private int[] table = new int[4];
    private int blocks;
    private int length;
    private int publishedBlocks;               // leading blocks already in the prefix cache (adopted or registered)
    private long publishedHash = PrefixHash.ROOT; // the chained hash of those blocks
    private int longRopeFrom = UNDECIDED;

    /** A sequence of up to {@code capacity} positions taking its blocks from {@code pool} as it grows. */
    public KvCache(KvBlockPool pool, int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("a KV cache of " + capacity + " positions");
        }
        this.pool = pool;
        this.capacity = capacity;
        this.blockSize = pool.blockSize();
    }

    /** A cache with a pool of its own, all of {@code capacity} positions reserved at once (the garbage collector frees it). */
    public KvCache(KvCacheType type, int layers, int capacity, int numKvHeads, int headDim) {
        this(new KvBlockPool(type, layers, numKvHeads, headDim, DEFAULT_BLOCK_SIZE,
                Math.max(1, (capacity + DEFAULT_BLOCK_SIZE - 1) / DEFAULT_BLOCK_SIZE), Arena.ofAuto()), capacity);
        if (!reserve(capacity)) {
            throw new IllegalStateException("a pool sized for " + capacity + " positions could not hold them");
        }
    }

    public KvCacheType type() {
        return pool.type();
    }

    public KvBlockPool pool() {
        return pool;
    }

    /** Positions this cache may ever hold. */
    public int capacity() {
        return capacity;
    }

    /** Positions written so far (the next token goes at this position). */
    public int length() {
        return length;
    }

    public int kvDim() {
        return pool.kvDim();
    }

    public int layers() {
        return pool.layers();
    }

    /** Bytes one position takes over all layers, keys and values (scales included). */
    public long bytesPerPosition() {
        return pool.bytesPerToken();
    }

    /**
     * The first position of this sequence whose keys and queries LongRoPE rotates with its long factors, as the model
     * decided it ({@code io.zse.model.LongRope}); {@link #UNDECIDED} before. Kept when the blocks are released (a
     * preempted sequence is recomputed the same way) and part of the prefix cache's key: blocks rotated from another
     * position hold other keys for the same tokens.
     */
    public int longRopeFrom() {
        return longRopeFrom;
    }

    /** Sets {@link #longRopeFrom()}, once, before anything is computed or adopted. */
    public void decideLongRopeFrom(int position) {
        if (position < 0) {
            throw new IllegalArgumentException("LongRoPE from position " + position);
        }
        if (longRopeFrom != UNDECIDED || length != 0 || publishedBlocks != 0) {
            throw new IllegalStateException("LongRoPE's switch position is set before the sequence's first pass, once");
        }
        longRopeFrom = position;
        publishedHash = prefixRoot();
    }

    private long prefixRoot() {
        return PrefixHash.root(longRopeFrom == UNDECIDED ? 0 : longRopeFrom + 1);
    }

    /** Blocks in the table (held, shared or not). */
    public int blocks() {
        return blocks;
    }

    /** Positions the blocks held now can take (never more than the capacity). */
    public int reservedPositions() {
        return Math.min(capacity, blocks * blockSize);
    }

    /** Blocks still to take before {@code positions} fit. */
    public int blocksMissing(int positions) {
        return Math.max(0, (positions + blockSize - 1) / blockSize - blocks);
    }

    /**
     * Takes blocks from the pool until {@code positions} positions fit. False if the pool ran out first (the blocks
     * taken so far stay held).
     */
    public boolean reserve(int positions) {
        if (positions > capacity) {
            throw new IllegalArgumentException(positions + " positions exceed the KV cache capacity of " + capacity);
        }
        while (reservedPositions() < positions) {
            int block = pool.allocate();
            if (block < 0) {
                return false;
            }
            append(block);
        }
        return true;
    }

    private void append(int block) {
        if (blocks == table.length) {
            table = Arrays.copyOf(table, blocks * 2);
        }
        table[blocks++] = block;
    }

    /**
     * Starts an empty cache with the cached blocks of the longest prefix of {@code tokens} found in the pool, full
     * blocks only, and at most {@code maxPositions} positions. Returns the positions now valid (their keys and values
     * need no computing). Pass {@code maxPositions} below the prompt length so the last prompt token is computed.
     */
    public int adoptPrefix(int[] tokens, int maxPositions) {
        if (blocks != 0 || length != 0) {
            throw new IllegalStateException("a prefix can only start an empty cache");
        }
        long parent = prefixRoot();
        for (int start = 0; start + blockSize <= Math.min(tokens.length, maxPositions); start += blockSize) {
            int[] blockTokens = Arrays.copyOfRange(tokens, start, start + blockSize);
            long hash = PrefixHash.next(parent, blockTokens);
            int block = pool.lookup(hash, parent, blockTokens);
            if (block < 0) {
                break;
            }
            append(block);
            parent = hash;
        }
        publishedBlocks = blocks;
        publishedHash = parent;
        length = reservedPositions();
        return length;
    }

    /**
     * Registers the computed full blocks of {@code tokens} (the sequence's tokens from position 0) not registered yet in
     * the pool's prefix cache, so later prompts that start the same can skip them. Cheap to call after every step.
     */
    public void publishComputed(int[] tokens) {
        int computedBlocks = Math.min(length, tokens.length) / blockSize;
        for (; publishedBlocks < computedBlocks; publishedBlocks++) {
            int from = publishedBlocks * blockSize;
            int[] blockTokens = Arrays.copyOfRange(tokens, from, from + blockSize);
            long hash = PrefixHash.next(publishedHash, blockTokens);
            pool.register(table[publishedBlocks], hash, publishedHash, blockTokens);
            publishedHash = hash;
        }
    }

    /** Gives every block back to the pool (cached prefix blocks stay findable); the cache is empty afterwards. */
    public void release() {
        for (int i = 0; i < blocks; i++) {
            pool.release(table[i]);
        }
        blocks = 0;
        length = 0;
        publishedBlocks = 0;
        publishedHash = prefixRoot();
    }

    /** The slot holding {@code position}. */
    public int slot(int position) {
        return table[position / blockSize] * blockSize + position % blockSize;
    }

    /**
     * Writes rows rowOffset..rowOffset+n-1 of k and v [rows, kvDim] (F32 in native order: a CPU backend's off-heap
     * activations) for {@code layer} at positions startPos...
     */
    public void store(int layer, int startPos, int n, MemorySegment k, MemorySegment v, int rowOffset) {
        checkWritable(layer, startPos, n);
        int kvDim = pool.kvDim();
        long needed = (long) (rowOffset + n) * kvDim * Float.BYTES;
        if (k.byteSize() < needed || v.byteSize() < needed) {
            throw new IllegalArgumentException("k and v need " + (rowOffset + n) + " rows of " + kvDim);
        }
        KvRows keys = pool.keys(layer);
        KvRows values = pool.values(layer);
        for (int i = 0; i < n; i++) {
            int slot = slot(startPos + i);
            keys.write(slot, k, (long) (rowOffset + i) * kvDim);
            values.write(slot, v, (long) (rowOffset + i) * kvDim);
        }
    }

    /** {@link #store(int, int, int, MemorySegment, MemorySegment, int)} of float arrays. */
    public void store(int layer, int startPos, int n, float[] k, float[] v, int rowOffset) {
        store(layer, startPos, n, MemorySegment.ofArray(k), MemorySegment.ofArray(v), rowOffset);
    }

    /**
     * Refuses a write of positions startPos..startPos+n-1 of {@code layer} that {@link #store} would refuse (a backend
     * keeping the pool's memory elsewhere, like CUDA's, checks with it).
     */
    public void checkWritable(int layer, int startPos, int n) {
        if (layer < 0 || layer >= pool.layers()) {
            throw new IllegalArgumentException("layer " + layer + " outside 0.." + (pool.layers() - 1));
        }
        if (startPos < 0 || n < 0 || startPos + n > reservedPositions()) {
            throw new IllegalArgumentException("positions " + startPos + ".." + (startPos + n - 1)
                    + " do not fit the " + reservedPositions() + " reserved positions of this KV cache");
        }
        if (startPos < publishedBlocks * blockSize) {
            // those blocks may be shared with other sequences through the prefix cache: they are read-only
            throw new IllegalArgumentException("position " + startPos + " is in a block of the prefix cache");
        }
    }

    /** {@link #store(int, int, int, float[], float[], int)} from row 0. */
    public void store(int layer, int startPos, int n, float[] k, float[] v) {
        store(layer, startPos, n, k, v, 0);
    }

    /** Marks positions below {@code length} as valid (after a forward pass wrote them in every layer). */
    public void setLength(int length) {
        if (length < 0 || length > reservedPositions()) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + reservedPositions());
        }
        this.length = length;
    }

    /** The keys of {@code layer} for every slot of the pool; index them with {@link #slot}. */
    public KvRows keys(int layer) {
        return pool.keys(layer);
    }

    /** The values of {@code layer} for every slot of the pool. */
    public KvRows values(int layer) {
        return pool.values(layer);
    }
}
