package io.zse.backend.cuda;

import io.zse.backend.WeightMatrix;
import io.zse.format.TensorType;

import java.lang.foreign.MemorySegment;

/**
 * A 2-D weight [rows, cols] uploaded in its .zse layout: the data bytes at the start of its device memory (an
 * allocation of its own, or a 256-byte aligned slot of the weights' one allocation) and the F16 scales (quantized
 * types) at the next 256-byte boundary, so the kernels' 16-byte loads stay aligned.
 */
final class CudaWeight implements WeightMatrix, AutoCloseable {
    static final long ALIGNMENT = 256;

    private final String name;
    private final TensorType type;
    private final int groupSize;
    private final int rows;
    private final int cols;
    private final DeviceBuffer memory;
    private final long base;            // where the weight starts in memory
    private final boolean ownsMemory;   // false: a slot of an allocation the backend frees
    private final long dataBytes;
    private final long scalesOffset;
    private final long scalesBytes;

    /**
     * A weight at {@code base} of {@code memory}: with {@code slot} false an allocation of its own, freed by
     * {@link #close()}; else a slot of an allocation the backend frees.
     */
    CudaWeight(String name, TensorType type, int groupSize, int rows, int cols, DeviceBuffer memory, long base,
               boolean slot, long dataBytes, long scalesBytes) {
        this.name = name;
        this.type = type;
        this.groupSize = groupSize;
        this.rows = rows;
        this.cols = cols;
        this.memory = memory;
        this.base = base;
        this.ownsMemory = !slot;
        this.dataBytes = dataBytes;
        this.scalesOffset = scalesOffset(dataBytes);
        this.scalesBytes = scalesBytes;
    }

    static long scalesOffset(long dataBytes) {
        return (dataBytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /** The device bytes a weight of these data and scale bytes takes: data, the alignment gap, scales. */
    static long deviceBytes(long dataBytes, long scalesBytes) {
        return scalesOffset(dataBytes) + scalesBytes;
    }

    MemorySegment data() {
        return memory.at(base, dataBytes);
    }

    long dataBytes() {
        return dataBytes;
    }

    long scalesOffset() {
        return scalesOffset;
    }

    long scalesBytes() {
        return scalesBytes;
    }

    /** The scales' device address, NULL for unquantized types. */
    MemorySegment scales() {
        return scalesBytes == 0 ? MemorySegment.NULL : memory.at(base + scalesOffset, scalesBytes);
    }

    String name() {
        return name;
    }

    int groupSize() {
        return groupSize;
    }

    long deviceBytes() {
        return deviceBytes(dataBytes, scalesBytes);
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public TensorType type() {
        return type;
    }

    @Override
    public String toString() {
        return name + " " + type + " [" + rows + ", " + cols + "] on the GPU";
    }

    @Override
    public void close() {
        if (ownsMemory) {
            memory.close();
        }
    }
}
