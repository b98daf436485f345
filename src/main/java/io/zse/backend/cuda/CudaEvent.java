package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/** A point in a stream's work: for cross-stream ordering, reuse of staging buffers and GPU-side timing. */
public final class CudaEvent implements AutoCloseable {
    private final CudaLibrary cuda;
    private MemorySegment handle;

    CudaEvent(CudaLibrary cuda) {
        this.cuda = cuda;
        this.handle = cuda.pointerOut("zse_cuda_event_create");
    }

    MemorySegment handle() {
        if (handle == null) {
            throw new IllegalStateException("CUDA event used after close");
        }
        return handle;
    }

    public void record(CudaStream stream) {
        cuda.call("zse_cuda_event_record", handle(), stream.handle());
    }

    public void synchronize() {
        cuda.call("zse_cuda_event_synchronize", handle());
    }

    /** Milliseconds between {@code start} and this event, both recorded and completed. */
    public float millisecondsSince(CudaEvent start) {
        return cuda.floatOut("zse_cuda_event_elapsed_ms", start.handle(), handle());
    }

    @Override
    public void close() {
        if (handle != null) {
            MemorySegment h = handle;
            handle = null;
            cuda.call("zse_cuda_event_destroy", h);
        }
    }
}
