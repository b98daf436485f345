package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/** A non-blocking CUDA stream; work queued on it runs in order. */
public final class CudaStream implements AutoCloseable {
    private final CudaLibrary cuda;
    private MemorySegment handle;
    private boolean capturing;

    CudaStream(CudaLibrary cuda) {
        this.cuda = cuda;
        this.handle = cuda.pointerOut("zse_cuda_stream_create");
    }

    MemorySegment handle() {
        if (handle == null) {
            throw new IllegalStateException("CUDA stream used after close");
        }
        return handle;
    }

    /** Whether a graph is being recorded from this stream ({@link CudaGraph#capture}): its work is not queued then. */
    boolean capturing() {
        return capturing;
    }

    void capturing(boolean recording) {
        capturing = recording;
    }

    /** Blocks until everything queued so far has run; reports a kernel fault as a CudaException. */
    public void synchronize() {
        cuda.call("zse_cuda_stream_synchronize", handle());
    }

    /** Later work on this stream waits for {@code event} without blocking the host. */
    public void waitFor(CudaEvent event) {
        cuda.call("zse_cuda_stream_wait_event", handle(), event.handle());
    }

    @Override
    public void close() {
        if (handle != null) {
            MemorySegment h = handle;
            handle = null;
            cuda.call("zse_cuda_stream_destroy", h);
        }
    }
}
