package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Rows stored as int8 codes with one F32 scale per (slot, kv head): value = codes[slot * kvDim + kvHead * headDim + i]
 * * scales[slot * numKvHeads + kvHead]. Symmetric, scale = absmax / 127 of the head's row, so each element is within
 * scale / 2 of what was written. A scale per head rather than per row: heads differ in magnitude.
 */
public final class Int8KvRows implements KvRows {
    private static final int MAX_CODE = 127;

    private final int numKvHeads;
    private final int headDim;
    private final int slots;
    private final MemorySegment codes;  // [slots, numKvHeads * headDim] int8
    private final MemorySegment scales; // [slots, numKvHeads] F32

    Int8KvRows(int slots, int numKvHeads, int headDim, Arena arena) {
        this.numKvHeads = numKvHeads;
        this.headDim = headDim;
        this.slots = slots;
        this.codes = OffHeapMemory.allocate(Math.multiplyExact((long) slots, (long) numKvHeads * headDim), arena);
        this.scales = OffHeapMemory.allocate(Math.multiplyExact((long) slots * numKvHeads, Float.BYTES), arena);
    }

    public int numKvHeads() {
        return numKvHeads;
    }

    @Override
    public int kvDim() {
        return numKvHeads * headDim;
    }

    @Override
    public int slots() {
        return slots;
    }

    /** [slots, kvDim] int8 codes, read in place by the attention kernels. */
    public MemorySegment codes() {
        return codes;
    }

    /** [slots, numKvHeads] F32 scales, read in place by the native attention. */
    public MemorySegment scales() {
        return scales;
    }

    /** The scale of the row of {@code kvHead} at {@code slot}. */
    public float scale(int slot, int kvHead) {
        return scales.getAtIndex(ValueLayout.JAVA_FLOAT, (long) slot * numKvHeads + kvHead);
    }

    @Override
    public void write(int slot, MemorySegment source, long sourceOffset) {
        for (int head = 0; head < numKvHeads; head++) {
            long from = sourceOffset + (long) head * headDim;
            long to = (long) slot * kvDim() + (long) head * headDim;
            float absMax = 0;
            for (int i = 0; i < headDim; i++) {
                absMax = Math.max(absMax, Math.abs(source.getAtIndex(ValueLayout.JAVA_FLOAT, from + i)));
            }
            float inverse = absMax == 0 ? 0 : MAX_CODE / absMax;
            for (int i = 0; i < headDim; i++) {
                codes.set(ValueLayout.JAVA_BYTE, to + i,
                        (byte) Math.clamp(Math.round(source.getAtIndex(ValueLayout.JAVA_FLOAT, from + i) * inverse),
                                -MAX_CODE, MAX_CODE));
            }
            scales.setAtIndex(ValueLayout.JAVA_FLOAT, (long) slot * numKvHeads + head, absMax / MAX_CODE);
        }
    }

    @Override
    public void read(int slot, float[] out, int offset) {
        for (int head = 0; head < numKvHeads; head++) {
            float scale = scale(slot, head);
            long from = (long) slot * kvDim() + (long) head * headDim;
            for (int i = 0; i < headDim; i++) {
                out[offset + head * headDim + i] = codes.get(ValueLayout.JAVA_BYTE, from + i) * scale;
            }
        }
    }
}
