package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/** Page-locked host memory (cudaMallocHost), the staging area host-to-device copies run from at full PCIe speed. */
public final class PinnedBuffer implements AutoCloseable {
    private final CudaLibrary cuda;
    private MemorySegment memory;

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

    @Override
    public void close() {
        if (memory != null) {
            MemorySegment m = memory;
            memory = null;
            cuda.call("zse_cuda_free_host", m);
        }
    }
}
