package io.zse.backend;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;

/**
 * The KV memory of one model: {@code blocks} fixed-size blocks of {@code blockSize} slots for every layer's keys and
 * values, allocated once off-heap. Sequences ({@link KvCache}) take blocks as they grow and give them back when they
 * end. Blocks are reference-counted so that several sequences can share the blocks of a common prompt prefix: a full
 * block of prompt tokens may be registered under the chained hash of its tokens ({@link PrefixHash}); it stays
 * cached after its last user lets go, and is reused by the next prompt that starts the same way, until the pool needs
 * the memory (least recently used first). Synchronized: one engine thread uses it, standalone caches own their own.
 */
public final class KvBlockPool implements AutoCloseable {
    private final KvCacheType type;
    private final int layers;
    private final int kvDim;
    private final int numKvHeads;
    private final int blockSize;
    private final int blocks;
    private final long bytesPerToken;
    private final Arena arena;
    private final KvRows[] keys;   // [layers], blocks * blockSize slots each
    private final KvRows[] values;
    private final int[] references;
    private final CachedBlock[] cachedAs;                            // per block: its prefix-cache entry, or null
    private final Map<Long, Integer> cachedBlocks = new HashMap<>(); // prefix hash -> block
    private final LinkedHashSet<Integer> unused = new LinkedHashSet<>(); // cached, unreferenced; eldest first
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private long hits;
    private long misses;

    /** A block's prefix-cache identity: the hash of the chain so far, its parent's, and its tokens (checked on hits). */
    private record CachedBlock(long hash, long parent, int[] tokens) {
    }

    /**
     * @param arena frees the memory when closed ({@link Arena#ofAuto()}: when the pool is unreachable)
     */
    public KvBlockPool(KvCacheType type, int layers, int numKvHeads, int headDim, int blockSize, int blocks, Arena arena) {
        if (layers <= 0 || numKvHeads <= 0 || headDim <= 0 || blockSize <= 0 || blocks <= 0) {
            throw new IllegalArgumentException("bad KV pool: " + layers + " layers, " + numKvHeads + " kv heads of "
                    + headDim + ", " + blocks + " blocks of " + blockSize);
        }
        int slots = Math.multiplyExact(blockSize, blocks);
        this.type = type;
        this.layers = layers;
        this.kvDim = Math.multiplyExact(numKvHeads, headDim);
        this.numKvHeads = numKvHeads;
        this.blockSize = blockSize;
        this.blocks = blocks;
        this.bytesPerToken = bytesPerToken(type, layers, numKvHeads, headDim);
        this.arena = arena;
        this.keys = new KvRows[layers];
        this.values = new KvRows[layers];
        for (int layer = 0; layer < layers; layer++) {
            keys[layer] = KvRows.create(type, slots, numKvHeads, headDim, arena);
            values[layer] = KvRows.create(type, slots, numKvHeads, headDim, arena);
        }
        this.references = new int[blocks];
        this.cachedAs = new CachedBlock[blocks];
        for (int b = 0; b < blocks; b++) {
            free.add(b);
        }
    }

    /** Bytes one token takes in every layer, keys and values (scales included). */
    public static long bytesPerToken(KvCacheType type, int layers, int numKvHeads, int headDim) {
        return 2L * layers * type.bytesPerRow(numKvHeads, headDim);
    }

    public KvCacheType type() {
        return type;
    }

    /** Whether the pool's memory is still there: false once it, or the arena it was made in, is closed. */
    public boolean isOpen() {
        return arena.scope().isAlive();
    }

    public int layers() {
        return layers;
    }

    public int kvDim() {
        return kvDim;
    }

    public int numKvHeads() {
        return numKvHeads;
    }

    /**
     * Refuses rows shaped for another cache. The width alone is not enough: an INT8 cache's scales are indexed by kv
     * head, so 4 heads of 32 over a pool of 2 of 64 would read and write past them.
     */
    public void checkShape(int kvHeads, int kvDim) {
        if (kvHeads != numKvHeads || kvDim != this.kvDim) {
            throw new IllegalArgumentException(kvHeads + " kv heads, kv dim " + kvDim + ", differ from the cache's "
                    + numKvHeads + " kv heads, kv dim " + this.kvDim);
        }
    }

    public int blockSize() {
        return blockSize;
    }

    public int totalBlocks() {
        return blocks;
    }

    /** Tokens the whole pool holds. */
    public long capacityTokens() {
        return (long) blocks * blockSize;
    }

    public long bytesPerToken() {
        return bytesPerToken;
    }

    /** Blocks a sequence could take now: free ones and cached ones nobody uses. */
    public synchronized int availableBlocks() {
        return free.size() + unused.size();
    }

    /** Blocks held by sequences (the rest are free or only cached). */
    public synchronized int usedBlocks() {
        return blocks - free.size() - unused.size();
    }

    /** Prefix-cache blocks found / looked for and not found, since the pool was made. */
    public synchronized long prefixHits() {
        return hits;
    }

    public synchronized long prefixMisses() {
        return misses;
    }

    public KvRows keys(int layer) {
        return keys[layer];
    }

    public KvRows values(int layer) {
        return values[layer];
    }

    /** A block for one sequence (reference count 1), or -1 when none is free or evictable. */
    synchronized int allocate() {
        Integer block = free.poll();
        if (block == null) {
            Iterator<Integer> eldest = unused.iterator();
            if (!eldest.hasNext()) {
                return -1;
            }
            block = eldest.next();
            eldest.remove();
            cachedBlocks.remove(cachedAs[block].hash());
            cachedAs[block] = null;
        }
        references[block] = 1;
        return block;
    }

    /** One user fewer; an unreferenced block goes back to the free list, or stays cached if it holds a prefix. */
    synchronized void release(int block) {
        if (references[block] <= 0) {
            throw new IllegalStateException("block " + block + " released more often than taken");
        }
        if (--references[block] == 0) {
            if (cachedAs[block] != null) {
                unused.add(block);
            } else {
                free.push(block);
            }
        }
    }

    /**
     * The cached block named {@code hash} ({@link PrefixHash#next} of {@code parent} and {@code tokens}), taken for one
     * more user (reference count + 1), or -1.
     */
    synchronized int lookup(long hash, long parent, int[] tokens) {
        Integer block = cachedBlocks.get(hash);
        if (block == null || cachedAs[block].parent() != parent || !Arrays.equals(cachedAs[block].tokens(), tokens)) {
            misses++;
            return -1;
        }
        hits++;
        if (references[block]++ == 0) {
            unused.remove(block);
        }
        return block;
    }

    /** Makes a full block of prompt tokens findable by {@link #lookup}; false if that prefix is already cached. */
    synchronized boolean register(int block, long hash, long parent, int[] tokens) {
        if (cachedAs[block] != null || cachedBlocks.containsKey(hash)) {
            return false;
        }
        cachedAs[block] = new CachedBlock(hash, parent, tokens.clone());
        cachedBlocks.put(hash, block);
        return true;
    }

    /** Forgets every cached prefix that nobody uses (their blocks become free). */
    public synchronized void dropCachedPrefixes() {
        for (int block : unused) {
            cachedBlocks.remove(cachedAs[block].hash());
            cachedAs[block] = null;
            free.push(block);
        }
        unused.clear();
    }

    /** Frees the memory (an owned arena only: {@link Arena#ofAuto()} cannot be closed). */
    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            try {
                arena.close();
            } catch (UnsupportedOperationException e) {
                // an automatic arena: the collector frees it
            }
        }
    }
}
