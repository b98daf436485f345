package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Copies weights from the mapped file to the device in large chunks over several streams, on its own thread and in
 * the order they were asked for (the model asks layer by layer, embeddings first): while one lane's chunk crosses PCIe
 * from its pinned staging buffer, the thread fills the next lane's buffer from the mapping (page faults and memcpy), so
 * reading the file and the DMA overlap, and the caller goes on meanwhile. Each tensor's copy ends with an event on
 * every lane that carried part of it: a compute stream waits on those ({@link Upload#orderAfter}) rather than on the
 * whole upload, so the first layers compute while the last ones are still on their way.
 */
final class WeightUploader implements AutoCloseable {
    static final long CHUNK_BYTES = 16L << 20;
    static final int LANES = 4;

    private final CudaLibrary cuda;
    private final int device;
    private final PinnedBuffer[] staging = new PinnedBuffer[LANES];
    private final CudaStream[] streams = new CudaStream[LANES];
    private final CudaEvent[] done = new CudaEvent[LANES];
    private final boolean[] busy = new boolean[LANES];
    private final BlockingQueue<Upload> queue = new LinkedBlockingQueue<>();
    private final List<Upload> pending = new ArrayList<>(); // queued by the caller and not yet finished
    private final Semaphore paced;                           // tests: one permit per upload the thread may issue
    private final AtomicLong bytesUploaded = new AtomicLong();
    private Thread thread;
    private int next;

    WeightUploader(CudaLibrary cuda, int device) {
        this(cuda, device, null);
    }

    /** With {@code paced} non-null the thread takes one of its permits before each upload (for tests). */
    WeightUploader(CudaLibrary cuda, int device, Semaphore paced) {
        this.cuda = cuda;
        this.device = device;
        this.paced = paced;
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

    /**
     * One tensor's copy: issued by the upload thread in queue order, landed when its events have fired. The source
     * (a slice of the mapping) stays referenced until then.
     */
    final class Upload {
        final String name;
        private MemorySegment source;
        private final DeviceBuffer target;
        private final long targetOffset;
        private final CountDownLatch issued = new CountDownLatch(1);
        private final List<CudaEvent> landed = new ArrayList<>();
        private volatile RuntimeException failure;

        private Upload(String name, MemorySegment source, DeviceBuffer target, long targetOffset) {
            this.name = name;
            this.source = source;
            this.target = target;
            this.targetOffset = targetOffset;
        }

        /**
         * Work queued on {@code stream} from now on runs after this copy has landed: waits on the host only until the
         * upload thread has issued it, then on the device.
         */
        void orderAfter(CudaStream stream) {
            awaitIssued();
            for (CudaEvent e : landed) {
                stream.waitFor(e);
            }
        }

        boolean isIssued() {
            return issued.getCount() == 0;
        }

        private void awaitIssued() {
            try {
                issued.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the upload of " + name, e);
            }
            if (failure != null) {
                throw new IllegalStateException("uploading " + name + " to the GPU failed: " + failure.getMessage(),
                        failure);
            }
        }
    }

    /** Queues the copy of {@code source} (any host memory, e.g. a slice of the mapping) to {@code target} at offset. */
    Upload upload(String name, MemorySegment source, DeviceBuffer target, long targetOffset) {
        Upload u = new Upload(name, source, target, targetOffset);
        if (thread == null) {
            thread = Thread.ofPlatform().name("zse-cuda-upload").daemon().start(this::run);
        }
        pending.add(u);
        queue.add(u);
        return u;
    }

    /** Whether every queued upload has been issued (its copies queued on the lanes): nothing more will be. */
    boolean issuedAll() {
        return pending.stream().allMatch(Upload::isIssued);
    }

    private void run() {
        try {
            cuda.setDevice(device);
            while (true) {
                Upload u = queue.take();
                if (u.source == null) {
                    return; // close()
                }
                if (paced != null) {
                    paced.acquire();
                }
                try {
                    issue(u);
                } catch (RuntimeException e) {
                    u.failure = e;
                }
                u.issued.countDown();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** On the upload thread: the tensor's chunks through the lanes' staging buffers, then its events. */
    private void issue(Upload u) {
        long size = u.source.byteSize();
        boolean[] used = new boolean[LANES];
        for (long at = 0; at < size; at += CHUNK_BYTES) {
            long length = Math.min(CHUNK_BYTES, size - at);
            int lane = next++ % LANES;
            if (busy[lane]) {
                done[lane].synchronize(); // its previous chunk has left the staging buffer
            }
            MemorySegment chunk = staging[lane].segment().asSlice(0, length);
            MemorySegment.copy(u.source, at, chunk, 0, length);
            u.target.copyFrom(chunk, u.targetOffset + at, streams[lane]);
            done[lane].record(streams[lane]);
            busy[lane] = true;
            used[lane] = true;
            bytesUploaded.addAndGet(length);
        }
        for (int lane = 0; lane < LANES; lane++) {
            if (used[lane]) {
                CudaEvent e = new CudaEvent(cuda);
                e.record(streams[lane]);
                u.landed.add(e);
            }
        }
        u.source = MemorySegment.NULL; // the mapping may go: its bytes are in staging or on the device
    }

    /** Waits until every queued copy has landed. */
    void finish() {
        for (Upload u : pending) {
            u.awaitIssued();
            for (CudaEvent e : u.landed) {
                e.synchronize();
            }
        }
        for (Upload u : pending) {
            u.landed.forEach(CudaEvent::close);
        }
        pending.clear();
    }

    /** Bytes issued to the device so far. */
    long bytesUploaded() {
        return bytesUploaded.get();
    }

    @Override
    public void close() {
        if (thread != null) {
            queue.add(new Upload("(end)", null, null, 0));
            if (paced != null) {
                paced.release(Integer.MAX_VALUE / 2);
            }
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            thread = null;
            for (CudaStream lane : streams) {
                if (lane != null) {
                    try {
                        lane.synchronize(); // no DMA reads a staging buffer or writes a weight once closed
                    } catch (RuntimeException e) {
                        // a device fault, already reported
                    }
                }
            }
        }
        for (Upload u : pending) {
            u.landed.forEach(WeightUploader::closeQuietly);
        }
        pending.clear();
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
