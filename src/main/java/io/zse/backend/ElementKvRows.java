package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Rows that store each element on its own, as F32 or F16: element [slot * kvDim + kvHead * headDim + i] of an off-heap
 * segment, which the attention kernels read in place. The subclasses say how a value is stored.
 */
public abstract sealed class ElementKvRows implements KvRows permits F32KvRows, F16KvRows {
    protected final int kvDim;
    private final int slots;
    protected final MemorySegment data;

    ElementKvRows(int slots, int kvDim, long elementBytes, Arena arena) {
        this.kvDim = kvDim;
        this.slots = slots;
        this.data = OffHeapMemory.allocate(Math.multiplyExact((long) slots * kvDim, elementBytes), arena);
    }

    @Override
    public final int kvDim() {
        return kvDim;
    }

    @Override
    public final int slots() {
        return slots;
    }

    /** [slots, kvDim] values as the subclass stores them. */
    public final MemorySegment data() {
        return data;
    }
}
