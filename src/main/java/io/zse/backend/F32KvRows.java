package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Rows stored as F32: element [slot * kvDim + kvHead * headDim + i] of an off-heap segment. */
public final class F32KvRows implements KvRows {
    private final int kvDim;
    private final int slots;
    private final MemorySegment data;

    F32KvRows(int slots, int kvDim, Arena arena) {
        this.kvDim = kvDim;
        this.slots = slots;
        this.data = OffHeapMemory.allocate(Math.multiplyExact((long) slots * kvDim, Float.BYTES), arena);
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    @Override
    public int slots() {
        return slots;
    }

    /** [slots, kvDim] F32, read in place by the attention kernels. */
    public MemorySegment data() {
        return data;
    }

    @Override
    public void write(int slot, MemorySegment source, long sourceOffset) {
        MemorySegment.copy(source, ValueLayout.JAVA_FLOAT, sourceOffset * Float.BYTES, data, ValueLayout.JAVA_FLOAT,
                (long) slot * kvDim * Float.BYTES, kvDim);
    }

    @Override
    public void read(int slot, float[] out, int offset) {
        MemorySegment.copy(data, ValueLayout.JAVA_FLOAT, (long) slot * kvDim * Float.BYTES, out, offset, kvDim);
    }
}
