package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory (cudaMallocHost), the staging area host-to-device copies run from at full PCIe speed. A copy
 * out of it runs when its stream reaches it, so {@link #writable} waits for the last copy queued by {@link #copyTo}
 * before the host writes again: on a busy GPU two uploads in a row otherwise both deliver the second one's values
 * (seen on an H200 under compute-sanitizer).
 */
public final class PinnedBuffer implements AutoCloseable {
    private final CudaLibrary cuda;
    private MemorySegment memory;
    private CudaEvent read;       // recorded after the last copy queued out of this buffer
    private boolean readPending;  // whether that copy may not have run yet

    PinnedBuffer(CudaLibrary cuda, long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned allocation of " + bytes + " bytes");
        }
        this.cuda = cuda;
        this.memory = cuda.pointerOut("zse_cuda_malloc_host", bytes).reinterpret(bytes);
    }

    /** The whole buffer; valid until {@link #close()}. */
    public MemorySegment segment() {
        if (memory == null) {
            throw new IllegalStateException("pinned buffer used after close");
        }
        return memory;
    }

    public long bytes() {
        return segment().byteSize();
    }

    /** The first {@code bytes}, for the host to write once no queued copy still has to read them. */
    MemorySegment writable(long bytes) {
        awaitRead();
        return segment().asSlice(0, bytes);
    }

    /**
     * Queues the copy of the first {@code bytes} to {@code target} at {@code offset} on {@code stream};
     * {@link #writable} waits for it. Not while the stream records a graph: the copy is then a node of the graph, not
     * work queued now (the backend uploads nothing inside a recording).
     */
    void copyTo(DeviceBuffer target, long bytes, long offset, CudaStream stream) {
        target.copyFrom(segment().asSlice(0, bytes), offset, stream);
        if (stream.capturing()) {
            return;
        }
        if (read == null) {
            read = new CudaEvent(cuda);
        }
        read.record(stream);
        readPending = true;
    }

    private void awaitRead() {
        if (readPending) {
            readPending = false;
            read.synchronize();
        }
    }

    @Override
    public void close() {
        try {
            awaitRead(); // no DMA reads the memory once it is freed
        } finally {
            MemorySegment m = memory;
            CudaEvent r = read;
            memory = null;
            read = null;
            Resources.closeAll(m == null ? null : () -> cuda.call("zse_cuda_free_host", m), r);
        }
    }
}
