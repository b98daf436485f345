package io.zse.backend.cuda;

import io.zse.format.InterleavedRows;

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

    /** Queues {@code w}'s rewrite on {@code stream} when it is pending; the stream must already wait for its copies. */
    void run(CudaWeight w, CudaStream stream) {
        if (pending.remove(w)) {
            rewrite(w, stream);
        }
    }

    /** Queues every pending rewrite; all copies must have landed. */
    void runAll(CudaStream stream) {
        for (CudaWeight w : pending) {
            rewrite(w, stream);
        }
        pending.clear();
    }

    /** The weight's whole allocation (data, then scales) into the scratch, and both rearranged back into place. */
    private void rewrite(CudaWeight w, CudaStream stream) {
        DeviceBuffer s = scratch(w.deviceBytes());
        cuda.call("zse_cuda_copy_on_device", s.at(0, w.deviceBytes()), w.data(), w.deviceBytes(), stream.handle());
        long rowBytes = w.type().dataBytes(w.cols());
        cuda.call("zse_cuda_deinterleave_rows", s.at(0, w.dataBytes()), w.data(), (long) w.rows(),
                rowBytes / InterleavedRows.STEP, InterleavedRows.STEP, stream.handle());
        if (w.scalesBytes() > 0) {
            cuda.call("zse_cuda_deinterleave_rows", s.at(w.scalesOffset(), w.scalesBytes()), w.scales(),
                    (long) w.rows(), w.scalesBytes() / w.rows() / SLOT_BYTES, SLOT_BYTES, stream.handle());
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
                largest = Math.max(largest, w.deviceBytes());
            }
            close(); // freeing device memory waits for the work queued on it
            scratch = new DeviceBuffer(cuda, largest);
        }
        return scratch;
    }

    @Override
    public void close() {
        if (scratch != null) {
            scratch.close();
            scratch = null;
        }
    }
}
