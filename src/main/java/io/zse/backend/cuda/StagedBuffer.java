package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A device buffer paired with a pinned host buffer of the same size, grown on demand: how F32/int32 arrays from the
 * {@code float[]} Backend interface reach the device and come back.
 */
final class StagedBuffer implements AutoCloseable {
    private final CudaLibrary cuda;
    private DeviceBuffer device;
    private PinnedBuffer host;

    StagedBuffer(CudaLibrary cuda) {
        this.cuda = cuda;
    }

    /** The device buffer, at least {@code bytes} large (contents are lost when it grows). */
    DeviceBuffer device(long bytes) {
        if (device == null || device.bytes() < bytes) {
            close();
            long size = Math.max(bytes, 1L << 16);
            DeviceBuffer grown = new DeviceBuffer(cuda, size);
            host = Resources.madeAfter(grown, () -> new PinnedBuffer(cuda, size));
            device = grown;
        }
        return device;
    }

    /** Copies values[from..from+count) to the device (queued on stream) and returns the device address. */
    MemorySegment upload(float[] values, int from, int count, CudaStream stream) {
        long bytes = (long) count * Float.BYTES;
        DeviceBuffer d = device(bytes);
        MemorySegment.copy(values, from, host.writable(bytes), ValueLayout.JAVA_FLOAT, 0, count);
        host.copyTo(d, bytes, 0, stream);
        return d.at(0, bytes);
    }

    MemorySegment upload(int[] values, CudaStream stream) {
        long bytes = (long) values.length * Integer.BYTES;
        DeviceBuffer d = device(bytes);
        MemorySegment.copy(values, 0, host.writable(bytes), ValueLayout.JAVA_INT, 0, values.length);
        host.copyTo(d, bytes, 0, stream);
        return d.at(0, bytes);
    }

    /** Copies count values back into target[0..count), waiting for the stream. */
    void download(float[] target, int count, CudaStream stream) {
        MemorySegment.copy(downloaded((long) count * Float.BYTES, stream), ValueLayout.JAVA_FLOAT, 0, target, 0, count);
    }

    void download(int[] target, int count, CudaStream stream) {
        MemorySegment.copy(downloaded((long) count * Integer.BYTES, stream), ValueLayout.JAVA_INT, 0, target, 0, count);
    }

    /** The first {@code bytes} of the device buffer, copied into the pinned buffer once the stream has run. */
    private MemorySegment downloaded(long bytes, CudaStream stream) {
        MemorySegment staged = host.segment().asSlice(0, bytes);
        device.copyTo(staged, 0, stream);
        stream.synchronize();
        return staged;
    }

    @Override
    public void close() {
        DeviceBuffer d = device;
        PinnedBuffer h = host;
        device = null;
        host = null;
        Resources.closeAll(d, h);
    }
}
