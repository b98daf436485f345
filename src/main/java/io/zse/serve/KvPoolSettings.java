package io.zse.serve;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;

/**
 * How an engine's KV block pool is made.
 *
 * @param type        element type of the stored keys and values
 * @param bytes       memory for the whole pool (rounded down to whole blocks, at least one sequence's worth)
 * @param blockSize   positions per block
 * @param prefixCache whether full blocks of computed tokens are kept and shared between sequences
 */
public record KvPoolSettings(KvCacheType type, long bytes, int blockSize, boolean prefixCache) {
    /** Positions per block unless a test asks otherwise: {@link KvCache#DEFAULT_BLOCK_SIZE}. */
    public static final int DEFAULT_BLOCK_SIZE = KvCache.DEFAULT_BLOCK_SIZE;

    public KvPoolSettings {
        if (bytes <= 0 || blockSize <= 0) {
            throw new IllegalArgumentException("bad KV pool: " + bytes + " bytes, blocks of " + blockSize);
        }
    }

    /** F32, prefix caching on, {@code bytes} of memory. */
    public static KvPoolSettings of(long bytes) {
        return new KvPoolSettings(KvCacheType.F32, bytes, DEFAULT_BLOCK_SIZE, true);
    }
}
