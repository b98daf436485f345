package io.zse.backend;

/**
 * The keys, or the values, of one layer of a {@link KvCache}: one row of kvDim = numKvHeads * headDim elements per
 * position, stored in the cache's {@link KvCacheType}. Backends read the storage of each type directly.
 */
public sealed interface KvRows permits F32KvRows, F16KvRows, Int8KvRows {

    /** Creates rows for {@code capacity} positions of {@code numKvHeads} heads of width {@code headDim}. */
    static KvRows create(KvCacheType type, int capacity, int numKvHeads, int headDim) {
        return switch (type) {
            case F32 -> new F32KvRows(capacity, numKvHeads * headDim);
            case F16 -> new F16KvRows(capacity, numKvHeads * headDim);
            case INT8 -> new Int8KvRows(capacity, numKvHeads, headDim);
        };
    }

    /** Elements per position (numKvHeads * headDim). */
    int kvDim();

    /** Stores source[sourceOffset .. sourceOffset + kvDim) as the row of {@code position}. */
    void write(int position, float[] source, int sourceOffset);

    /** Decodes the row of {@code position} into out[offset .. offset + kvDim). */
    void read(int position, float[] out, int offset);

    /** Bytes one position takes (codes plus scales). */
    int bytesPerPosition();
}
