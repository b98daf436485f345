package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Rows stored as F32 (see {@link ElementKvRows}). */
public final class F32KvRows extends ElementKvRows {
    F32KvRows(int slots, int kvDim, Arena arena) {
        super(slots, kvDim, Float.BYTES, arena);
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
