package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A device buffer paired with a pinned host buffer of the same size, grown on demand: how F32/int32 arrays from the
 * {@code float[]} Backend interface reach the device and come back. A copy out of pinned memory runs when the stream
 * reaches it, so the host waits for the last queued copy before it writes the pinned buffer again (on a busy GPU two
 * uploads in a row otherwise both deliver the second one's values: seen on an H200 under compute-sanitizer).
 */
final class StagedBuffer implements AutoCloseable {
    private final CudaLibrary cuda;
    private DeviceBuffer device;
    private PinnedBuffer host;
    private CudaEvent copied;     // recorded after the last copy out of host
    private boolean copyQueued;   // whether that copy may not have run yet

    StagedBuffer(CudaLibrary cuda) {
        this.cuda = cuda;
    }

    /** The device buffer, at least {@code bytes} large (contents are lost when it grows). */
    DeviceBuffer device(long bytes) {
        if (device == null || device.bytes() < bytes) {
            awaitCopy();
            close();
            long size = Math.max(bytes, 1L << 16);
            device = new DeviceBuffer(cuda, size);
            host = new PinnedBuffer(cuda, size);
        }
        return device;
    }

    /** Copies values[from..from+count) to the device (queued on stream) and returns the device address. */
    MemorySegment upload(float[] values, int from, int count, CudaStream stream) {
        long bytes = (long) count * Float.BYTES;
        DeviceBuffer d = device(bytes);
        MemorySegment staged = writable(bytes);
        MemorySegment.copy(values, from, staged, ValueLayout.JAVA_FLOAT, 0, count);
        d.copyFrom(staged, 0, stream);
        queued(stream);
        return d.at(0, bytes);
    }

    MemorySegment upload(int[] values, CudaStream stream) {
        long bytes = (long) values.length * Integer.BYTES;
        DeviceBuffer d = device(bytes);
        MemorySegment staged = writable(bytes);
        MemorySegment.copy(values, 0, staged, ValueLayout.JAVA_INT, 0, values.length);
        d.copyFrom(staged, 0, stream);
        queued(stream);
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
        copyQueued = false;
        return staged;
    }

    /** The pinned buffer's first {@code bytes}, once no queued copy still has to read them. */
    private MemorySegment writable(long bytes) {
        awaitCopy();
        return host.segment().asSlice(0, bytes);
    }

    private void awaitCopy() {
        if (copyQueued) {
            copied.synchronize();
            copyQueued = false;
        }
    }

    /**
     * Marks the pinned buffer busy until the copy just queued has run. Not while the stream records a graph: the copy
     * is then a node of the graph, not work queued now (the backend uploads nothing inside a recording).
     */
    private void queued(CudaStream stream) {
        if (stream.capturing()) {
            return;
        }
        if (copied == null) {
            copied = new CudaEvent(cuda);
        }
        copied.record(stream);
        copyQueued = true;
    }

    @Override
    public void close() {
        awaitCopy();
        if (copied != null) {
            copied.close();
            copied = null;
        }
        if (device != null) {
            device.close();
            host.close();
            device = null;
            host = null;
        }
    }
}
