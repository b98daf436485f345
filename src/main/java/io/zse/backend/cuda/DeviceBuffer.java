package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device allocation owned by this object: freed by {@link #close()}, and every copy into or out of it checked
 * against its size first, so a wrong offset is an exception in Java rather than a fault on the GPU.
 */
public final class DeviceBuffer implements AutoCloseable {
    /** Allocations and frees so far: a recorded CUDA graph holds device addresses, valid while this stays put. */
    private static final AtomicLong CHANGES = new AtomicLong();

    private final CudaLibrary cuda;
    private final long bytes;
    private MemorySegment pointer;

    DeviceBuffer(CudaLibrary cuda, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("device allocation of " + bytes + " bytes");
        }
        this.cuda = cuda;
        this.bytes = bytes;
        this.pointer = cuda.pointerOut("zse_cuda_malloc", bytes);
        CHANGES.incrementAndGet();
    }

    /** How many device buffers have been allocated or freed in this process. */
    static long changes() {
        return CHANGES.get();
    }

    public long bytes() {
        return bytes;
    }

    /** The device address {@code offset} bytes in, for a kernel argument covering {@code length} bytes. */
    public MemorySegment at(long offset, long length) {
        checkRange(offset, length);
        return MemorySegment.ofAddress(pointer.address() + offset);
    }

    /** Queues a copy of {@code source} (native host memory, ideally pinned) to {@code offset}. */
    public void copyFrom(MemorySegment source, long offset, CudaStream stream) {
        requireNative(source);
        cuda.call("zse_cuda_copy_to_device", at(offset, source.byteSize()), source, source.byteSize(), stream.handle());
    }

    /** Queues a copy of {@code target.byteSize()} bytes from {@code offset} into {@code target} (native host memory). */
    public void copyTo(MemorySegment target, long offset, CudaStream stream) {
        requireNative(target);
        cuda.call("zse_cuda_copy_to_host", target, at(offset, target.byteSize()), target.byteSize(), stream.handle());
    }

    /** Queues a device-to-device copy of {@code length} bytes. */
    public void copyFrom(DeviceBuffer source, long sourceOffset, long offset, long length, CudaStream stream) {
        cuda.call("zse_cuda_copy_on_device", at(offset, length), source.at(sourceOffset, length), length,
                stream.handle());
    }

    public void fill(int value, CudaStream stream) {
        cuda.call("zse_cuda_memset", at(0, bytes), value, bytes, stream.handle());
    }

    private void checkRange(long offset, long length) {
        if (pointer == null) {
            throw new IllegalStateException("device buffer of " + bytes + " bytes used after close");
        }
        if (offset < 0 || length < 0 || offset > bytes - length) {
            throw new IndexOutOfBoundsException("bytes " + offset + ".." + (offset + length) + " outside a device buffer of "
                    + bytes);
        }
    }

    private static void requireNative(MemorySegment host) {
        Objects.requireNonNull(host, "host segment");
        if (!host.isNative()) {
            throw new IllegalArgumentException("host side of a device copy must be native memory, not a Java array");
        }
    }

    @Override
    public void close() {
        if (pointer != null) {
            MemorySegment p = pointer;
            pointer = null;
            CHANGES.incrementAndGet();
            cuda.call("zse_cuda_free", p);
        }
    }
}
