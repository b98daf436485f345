package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;

/**
 * A zero-copy view of one tensor in a mapped {@code .zse} file.
 *
 * @param data   the element bytes (slice of the mapping)
 * @param scales the scale bytes, empty for unquantized types
 * @param file   the open file that data and scales map, at info's data and scales offsets: a device upload checks its
 *               size before copying out of the mapping (which faults past the file's end). Null for a tensor not read
 *               from a file.
 */
public record ZseTensor(TensorInfo info, MemorySegment data, MemorySegment scales, FileChannel file) {
    /** A tensor not read from a file (built in memory). */
    public ZseTensor(TensorInfo info, MemorySegment data, MemorySegment scales) {
        this(info, data, scales, null);
    }

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
