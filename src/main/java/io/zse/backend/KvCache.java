package io.zse.backend;

/**
 * Keys and values of one sequence, F32, for every layer and every position written so far.
 * Layout per layer: keys[position * kvDim + kvHead * headDim + i], values likewise.
 */
public final class KvCache {
    private final int capacity;
    private final int kvDim;
    private final float[][] keys;   // [layers][capacity * kvDim]
    private final float[][] values; // [layers][capacity * kvDim]
    private int length;

    public KvCache(int layers, int capacity, int kvDim) {
        if (layers <= 0 || capacity <= 0 || kvDim <= 0) {
            throw new IllegalArgumentException("bad KV cache size: " + layers + " layers, " + capacity
                    + " positions, kv dim " + kvDim);
        }
        this.capacity = capacity;
        this.kvDim = kvDim;
        this.keys = new float[layers][Math.multiplyExact(capacity, kvDim)];
        this.values = new float[layers][capacity * kvDim];
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

    /** Writes k and v rows [n, kvDim] of {@code layer} at positions startPos..startPos+n-1. */
    public void store(int layer, int startPos, int n, float[] k, float[] v) {
        if (startPos < 0 || startPos + n > capacity) {
            throw new IllegalArgumentException("positions " + startPos + ".." + (startPos + n - 1)
                    + " do not fit a KV cache of " + capacity);
        }
        System.arraycopy(k, 0, keys[layer], startPos * kvDim, n * kvDim);
        System.arraycopy(v, 0, values[layer], startPos * kvDim, n * kvDim);
    }

    /** Marks positions below {@code length} as valid (after a forward pass wrote them in every layer). */
    public void setLength(int length) {
        if (length < 0 || length > capacity) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + capacity);
        }
        this.length = length;
    }

    /** The keys of {@code layer}, [capacity, kvDim]; read by the attention kernels. */
    public float[] keys(int layer) {
        return keys[layer];
    }

    /** The values of {@code layer}, [capacity, kvDim]. */
    public float[] values(int layer) {
        return values[layer];
    }
}
