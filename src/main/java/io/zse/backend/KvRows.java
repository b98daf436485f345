package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The keys, or the values, of one layer: one row of kvDim = numKvHeads * headDim elements per slot, stored off-heap in
 * a {@link KvCacheType}. A slot is a physical row; a {@link KvCache} maps each position of its sequence to a slot of
 * its blocks. Backends read the storage of each type directly.
 */
public sealed interface KvRows permits ElementKvRows, Int8KvRows {

    /** Rows for {@code slots} slots of {@code numKvHeads} heads of width {@code headDim}, freed with {@code arena}. */
    static KvRows create(KvCacheType type, int slots, int numKvHeads, int headDim, Arena arena) {
        return switch (type) {
            case F32 -> new F32KvRows(slots, numKvHeads * headDim, arena);
            case F16 -> new F16KvRows(slots, numKvHeads * headDim, arena);
            case INT8 -> new Int8KvRows(slots, numKvHeads, headDim, arena);
        };
    }

    /** Rows whose memory the garbage collector frees (tests, one-off caches). */
    static KvRows create(KvCacheType type, int slots, int numKvHeads, int headDim) {
        return create(type, slots, numKvHeads, headDim, Arena.ofAuto());
    }

    /** Elements per slot (numKvHeads * headDim). */
    int kvDim();

    /** Slots these rows hold. */
    int slots();

    /**
     * Stores source[sourceOffset .. sourceOffset + kvDim) as the row of {@code slot}: F32 in native order, off-heap
     * activations or a float array's segment, offsets in floats.
     */
    void write(int slot, MemorySegment source, long sourceOffset);

    /** {@link #write(int, MemorySegment, long)} from a float array. */
    default void write(int slot, float[] source, int sourceOffset) {
        write(slot, MemorySegment.ofArray(source), sourceOffset);
    }

    /** Decodes the row of {@code slot} into out[offset .. offset + kvDim). */
    void read(int slot, float[] out, int offset);
}
