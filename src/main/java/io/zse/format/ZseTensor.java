package io.zse.format;

import java.lang.foreign.MemorySegment;

/**
 * A zero-copy view of one tensor in a mapped {@code .zse} file.
 *
 * @param data   the element bytes (slice of the mapping)
 * @param scales the scale bytes, empty for unquantized types
 */
public record ZseTensor(TensorInfo info, MemorySegment data, MemorySegment scales) {
    public String name() {
        return info.name();
    }

    public TensorType type() {
        return info.type();
    }

    public long[] shape() {
        return info.shape();
    }

    public int groupSize() {
        return info.groupSize();
    }
}
