package io.zse.backend.cuda;

import io.zse.backend.ActivationBuffer;

import java.lang.foreign.MemorySegment;

/** The CUDA backend's activations: F32 in device memory, read and written in place by the kernels. */
final class DeviceActivations implements ActivationBuffer {
    final DeviceBuffer buffer;
    private final long floats;

    DeviceActivations(CudaLibrary cuda, long floats) {
        this.floats = floats;
        this.buffer = new DeviceBuffer(cuda, Math.max(1, floats) * Float.BYTES);
    }

    @Override
    public long capacity() {
        return floats;
    }

    /** The device address of float {@code index}, for a kernel covering {@code count} floats from it. */
    MemorySegment at(long index, long count) {
        return buffer.at(index * Float.BYTES, count * Float.BYTES);
    }

    @Override
    public void close() {
        buffer.close();
    }
}
