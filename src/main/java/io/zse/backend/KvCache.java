package io.zse.backend;

/**
 * Keys and values of one sequence, for every layer and every position written so far, stored as its
 * {@link KvCacheType} says. Per layer, {@link #keys} and {@link #values} hold one row of kvDim = numKvHeads * headDim
 * elements per position.
 */
public final class KvCache {
    private final KvCacheType type;
    private final int capacity;
    private final int kvDim;
    private final KvRows[] keys;   // [layers]
    private final KvRows[] values; // [layers]
    private int length;

    public KvCache(KvCacheType type, int layers, int capacity, int numKvHeads, int headDim) {
        if (layers <= 0 || capacity <= 0 || numKvHeads <= 0 || headDim <= 0) {
            throw new IllegalArgumentException("bad KV cache size: " + layers + " layers, " + capacity
                    + " positions, " + numKvHeads + " kv heads of " + headDim);
        }
        this.type = type;
        this.capacity = capacity;
        this.kvDim = Math.multiplyExact(numKvHeads, headDim);
        this.keys = new KvRows[layers];
        this.values = new KvRows[layers];
        for (int layer = 0; layer < layers; layer++) {
            keys[layer] = KvRows.create(type, capacity, numKvHeads, headDim);
            values[layer] = KvRows.create(type, capacity, numKvHeads, headDim);
        }
    }

    public KvCacheType type() {
        return type;
    }

    /** Positions this cache can hold. */
    public int capacity() {
        return capacity;
    }

    /** Positions written so far (the next token goes at this position). */
    public int length() {
        return length;
    }

    public int kvDim() {
        return kvDim;
    }

    public int layers() {
        return keys.length;
    }

    /** Bytes one position takes over all layers, keys and values (scales included). */
    public long bytesPerPosition() {
        return (long) keys.length * (keys[0].bytesPerPosition() + values[0].bytesPerPosition());
    }

    /** Writes k and v rows [n, kvDim] of {@code layer} at positions startPos..startPos+n-1. */
    public void store(int layer, int startPos, int n, float[] k, float[] v) {
        if (layer < 0 || layer >= keys.length) {
            throw new IllegalArgumentException("layer " + layer + " outside 0.." + (keys.length - 1));
        }
        if (startPos < 0 || n < 0 || startPos + n > capacity) {
            throw new IllegalArgumentException("positions " + startPos + ".." + (startPos + n - 1)
                    + " do not fit a KV cache of " + capacity);
        }
        if (k.length < n * kvDim || v.length < n * kvDim) {
            throw new IllegalArgumentException("k and v need " + n + " rows of " + kvDim);
        }
        for (int i = 0; i < n; i++) {
            keys[layer].write(startPos + i, k, i * kvDim);
            values[layer].write(startPos + i, v, i * kvDim);
        }
    }

    /** Marks positions below {@code length} as valid (after a forward pass wrote them in every layer). */
    public void setLength(int length) {
        if (length < 0 || length > capacity) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + capacity);
        }
        this.length = length;
    }

    /** The keys of {@code layer}, [capacity, kvDim]; read in place by the attention kernels. */
    public KvRows keys(int layer) {
        return keys[layer];
    }

    /** The values of {@code layer}, [capacity, kvDim]. */
    public KvRows values(int layer) {
        return values[layer];
    }
}
