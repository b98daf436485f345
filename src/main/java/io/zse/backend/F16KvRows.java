package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Rows stored as IEEE binary16 bit patterns (see {@link ElementKvRows}). */
public final class F16KvRows extends ElementKvRows {
    F16KvRows(int slots, int kvDim, Arena arena) {
        super(slots, kvDim, Short.BYTES, arena);
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
