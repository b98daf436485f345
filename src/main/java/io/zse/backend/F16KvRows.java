package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Rows stored as IEEE binary16 bit patterns: element [slot * kvDim + kvHead * headDim + i] of an off-heap segment. */
public final class F16KvRows implements KvRows {
    private final int kvDim;
    private final int slots;
    private final MemorySegment data;

    F16KvRows(int slots, int kvDim, Arena arena) {
        this.kvDim = kvDim;
        this.slots = slots;
        this.data = OffHeapMemory.allocate(Math.multiplyExact((long) slots * kvDim, Short.BYTES), arena);
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    @Override
    public int slots() {
        return slots;
    }

    /** [slots, kvDim] binary16 bit patterns, read in place by the attention kernels. */
    public MemorySegment data() {
        return data;
    }

    @Override
    public void write(int slot, MemorySegment source, long sourceOffset) {
        long base = (long) slot * kvDim;
        for (int i = 0; i < kvDim; i++) {
            data.setAtIndex(ValueLayout.JAVA_SHORT, base + i,
                    Float.floatToFloat16(source.getAtIndex(ValueLayout.JAVA_FLOAT, sourceOffset + i)));
        }
    }

    @Override
    public void read(int slot, float[] out, int offset) {
        long base = (long) slot * kvDim;
        for (int i = 0; i < kvDim; i++) {
            out[offset + i] = Float.float16ToFloat(data.getAtIndex(ValueLayout.JAVA_SHORT, base + i));
        }
    }
}
