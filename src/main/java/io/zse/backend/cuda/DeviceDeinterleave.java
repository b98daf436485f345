package io.zse.backend.cuda;

import io.zse.format.InterleavedRows;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * Weights stored in layout interleaved-16 (tiles for the CPU's integer kernels) go to the device as they are stored and
 * are rewritten there in row-groups, the layout the CUDA kernels read: no host pass over the weights, so the upload
 * stays a plain copy. Each weight's rewrite is queued on the compute stream once its copies have landed: its bytes are
 * copied into one scratch buffer (the size of the largest such weight) and rearranged back into place, one weight
 * after another on that stream, so the scratch is reused without further ordering and freed once all have run.
 */
final class DeviceDeinterleave implements AutoCloseable {
    private static final int SLOT_BYTES = 2;

    private final CudaLibrary cuda;
    private final Set<CudaWeight> pending = Collections.newSetFromMap(new IdentityHashMap<>());
    private DeviceBuffer scratch;

    DeviceDeinterleave(CudaLibrary cuda) {
        this.cuda = cuda;
    }

    /** {@code w}'s device memory will hold its interleaved bytes as stored; {@link #run} rewrites them. */
    void add(CudaWeight w) {
        pending.add(w);
    }

    boolean isEmpty() {
        return pending.isEmpty();
    }

    /** Queues {@code w}'s rewrite on {@code stream} when it is pending; the stream must already wait for its copies. */
    void run(CudaWeight w, CudaStream stream) {
        if (!pending.remove(w)) {
            return;
        }
        long dataBytes = dataBytes(w);
        long scaleBytes = scaleBytes(w);
        long scalesAt = CudaWeight.scalesOffset(dataBytes);
        DeviceBuffer s = scratch(scalesAt + scaleBytes);
        long rowBytes = w.type().dataBytes(w.cols());
        cuda.call("zse_cuda_copy_on_device", s.at(0, dataBytes), w.data(), dataBytes, stream.handle());
        cuda.call("zse_cuda_deinterleave_rows", s.at(0, dataBytes), w.data(), (long) w.rows(),
                rowBytes / InterleavedRows.STEP, InterleavedRows.STEP, stream.handle());
        if (scaleBytes > 0) {
            MemorySegment scales = s.at(scalesAt, scaleBytes);
            cuda.call("zse_cuda_copy_on_device", scales, w.scales(), scaleBytes, stream.handle());
            cuda.call("zse_cuda_deinterleave_rows", scales, w.scales(), (long) w.rows(),
                    scaleBytes / w.rows() / SLOT_BYTES, SLOT_BYTES, stream.handle());
        }
    }

    /** Queues every pending rewrite; all copies must have landed. */
    void runAll(CudaStream stream) {
        for (CudaWeight w : new ArrayList<>(pending)) {
            run(w, stream);
        }
    }

    /** Frees the scratch buffer once the stream has run what was queued on it; a later rewrite allocates it again. */
    void release(CudaStream stream) {
        if (scratch != null) {
            stream.synchronize();
            close();
        }
    }

    /** The scratch, at least {@code bytes} large; the largest pending weight's size when it is first made. */
    private DeviceBuffer scratch(long bytes) {
        if (scratch == null || scratch.bytes() < bytes) {
            long largest = bytes;
            for (CudaWeight w : pending) {
                largest = Math.max(largest, CudaWeight.scalesOffset(dataBytes(w)) + scaleBytes(w));
            }
            close(); // freeing device memory waits for the work queued on it
            scratch = new DeviceBuffer(cuda, largest);
        }
        return scratch;
    }

    private static long dataBytes(CudaWeight w) {
        return w.type().dataBytes((long) w.rows() * w.cols());
    }

    private static long scaleBytes(CudaWeight w) {
        return w.type().scaleBytes((long) w.rows() * w.cols(), w.groupSize());
    }

    @Override
    public void close() {
        if (scratch != null) {
            scratch.close();
            scratch = null;
        }
    }
}
