package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/**
 * A captured sequence of kernel launches and copies, replayed with one launch: for a decode step this replaces a few
 * hundred launches (each several microseconds of CPU time) by one. A replay reuses the captured pointers and
 * arguments, so what changes between steps (token id, position) must live in device memory the kernels read.
 */
public final class CudaGraph implements AutoCloseable {
    private final CudaLibrary cuda;
    private MemorySegment handle;

    private CudaGraph(CudaLibrary cuda, MemorySegment handle) {
        this.cuda = cuda;
        this.handle = handle;
    }

    /** Records what {@code work} queues on {@code stream} (nothing runs yet) and instantiates it. */
    public static CudaGraph capture(CudaLibrary cuda, CudaStream stream, Runnable work) {
        cuda.call("zse_cuda_graph_begin_capture", stream.handle());
        stream.capturing(true);
        try {
            work.run();
        } catch (RuntimeException | Error e) {
            // The stream must leave capture mode, and a graph the capture still made must not be kept (or leak).
            try {
                MemorySegment made = cuda.endGraphCapture(stream.handle());
                if (!MemorySegment.NULL.equals(made)) {
                    new CudaGraph(cuda, made).close();
                }
            } catch (CudaException ignored) {
                // The capture is invalid anyway; the original failure is the one to report.
            }
            throw e;
        } finally {
            stream.capturing(false);
        }
        return new CudaGraph(cuda, cuda.endGraphCapture(stream.handle()));
    }

    public void launch(CudaStream stream) {
        if (handle == null) {
            throw new IllegalStateException("CUDA graph used after close");
        }
        cuda.call("zse_cuda_graph_launch", handle, stream.handle());
    }

    @Override
    public void close() {
        if (handle != null) {
            MemorySegment h = handle;
            handle = null;
            cuda.call("zse_cuda_graph_destroy", h);
        }
    }
}
