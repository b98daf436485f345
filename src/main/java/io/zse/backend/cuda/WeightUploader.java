package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Copies weights from the mapped file to the device in large chunks over several streams: while one lane's chunk
 * crosses PCIe from its pinned staging buffer, the CPU fills the next lane's buffer from the mapping (page faults and
 * memcpy), so reading the file and the DMA overlap.
 */
final class WeightUploader implements AutoCloseable {
    static final long CHUNK_BYTES = 16L << 20;
    static final int LANES = 4;

    private final PinnedBuffer[] staging = new PinnedBuffer[LANES];
    private final CudaStream[] streams = new CudaStream[LANES];
    private final CudaEvent[] done = new CudaEvent[LANES];
    private final boolean[] busy = new boolean[LANES];
    private int next;
    private long bytesUploaded;

    WeightUploader(CudaLibrary cuda) {
        try {
            for (int i = 0; i < LANES; i++) {
                staging[i] = new PinnedBuffer(cuda, CHUNK_BYTES);
                streams[i] = new CudaStream(cuda);
                done[i] = new CudaEvent(cuda);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Queues the copy of {@code source} (any host memory, e.g. a slice of the mapping) to {@code target} at offset. */
    void upload(MemorySegment source, DeviceBuffer target, long targetOffset) {
        long size = source.byteSize();
        for (long at = 0; at < size; at += CHUNK_BYTES) {
            long length = Math.min(CHUNK_BYTES, size - at);
            int lane = next++ % LANES;
            if (busy[lane]) {
                done[lane].synchronize(); // its previous chunk has left the staging buffer
            }
            MemorySegment chunk = staging[lane].segment().asSlice(0, length);
            MemorySegment.copy(source, at, chunk, 0, length);
            target.copyFrom(chunk, targetOffset + at, streams[lane]);
            done[lane].record(streams[lane]);
            busy[lane] = true;
            bytesUploaded += length;
        }
    }

    /** Waits for every queued copy. */
    void finish() {
        for (int lane = 0; lane < LANES; lane++) {
            if (busy[lane]) {
                streams[lane].synchronize();
                busy[lane] = false;
            }
        }
    }

    long bytesUploaded() {
        return bytesUploaded;
    }

    @Override
    public void close() {
        for (int i = 0; i < LANES; i++) {
            closeQuietly(done[i]);
            closeQuietly(streams[i]);
            closeQuietly(staging[i]);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            // Closing after a device fault can fail again; the fault was already reported.
        }
    }
}
