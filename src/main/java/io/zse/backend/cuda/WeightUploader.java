package io.zse.backend.cuda;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Copies weights from the mapped file to the device in large chunks over several lanes, in the order they were asked
 * for (the model asks layer by layer, embeddings first), while the caller goes on. A dispatcher thread deals each
 * tensor's chunks to the lanes in turn; each lane has its own thread, pinned staging buffers and stream, so the lanes
 * read the file on several cores at once, not one (a PCIe 5 link takes 55 GB/s, more than one core copies out of the
 * page cache), and with two buffers a lane reads its next chunk while the previous one's DMA runs (with one, each read
 * waited for the DMA before it: 26-28 GB/s on an H200 whose link gave 55). Each tensor's copy ends
 * with an event on every lane that carried part of it: a compute stream waits on those ({@link Upload#orderAfter})
 * rather than on the whole upload, so the first layers compute while the last ones are still on their way.
 */
final class WeightUploader implements AutoCloseable {
    static final long CHUNK_BYTES = 16L << 20;
    /** A lane per two cores, 2 to 8: each lane's thread copies out of the page cache at 5-10 GB/s. */
    static final int LANES = Math.clamp(Runtime.getRuntime().availableProcessors() / 2, 2, 8);

    private final CudaLibrary cuda;
    private final int device;
    /** Staging buffers a lane: ZSE_CUDA_UPLOAD_BUFFERS, 2 unless set to 1 (to compare them on a GPU, bench/gpu.sh). */
    private final int buffers = buffersSetting(System.getenv("ZSE_CUDA_UPLOAD_BUFFERS"));
    private final Lane[] lanes = new Lane[LANES];
    private final BlockingQueue<Upload> queue = new LinkedBlockingQueue<>();
    private final List<Upload> pending = new ArrayList<>(); // queued by the caller and not yet finished
    private final Semaphore paced;                           // tests: one permit per upload the dispatcher may issue
    private final AtomicLong bytesUploaded = new AtomicLong();
    private final AtomicLong lastIssuedNanos = new AtomicLong(); // when an upload's last chunk was issued, latest
    private Thread dispatcher;
    private int next;                                        // the lane the next chunk goes to

    WeightUploader(CudaLibrary cuda, int device) {
        this(cuda, device, null);
    }

    /** With {@code paced} non-null the dispatcher takes one of its permits before each upload (for tests). */
    WeightUploader(CudaLibrary cuda, int device, Semaphore paced) {
        this.cuda = cuda;
        this.device = device;
        this.paced = paced;
        try {
            for (int i = 0; i < LANES; i++) {
                lanes[i] = new Lane(i);
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * One tensor's copy: issued in queue order, landed when its events have fired. The source (a slice of the mapping)
     * stays referenced until every chunk of it has been copied out.
     */
    final class Upload {
        final String name;
        private volatile MemorySegment source;
        private final FileChannel file;   // the file source maps, read at fileOffset on; null: copy out of source
        private final long fileOffset;
        private final DeviceBuffer target;
        private final long targetOffset;
        private final int chunks;
        private final CountDownLatch issued;
        private final List<CudaEvent> landed = Collections.synchronizedList(new ArrayList<>());
        private volatile RuntimeException failure;

        private Upload(String name, MemorySegment source, FileChannel file, long fileOffset, DeviceBuffer target,
                       long targetOffset) {
            this.name = name;
            this.source = source;
            this.file = file;
            this.fileOffset = fileOffset;
            this.target = target;
            this.targetOffset = targetOffset;
            this.chunks = source == null ? 0 : (int) ((source.byteSize() + CHUNK_BYTES - 1) / CHUNK_BYTES);
            this.issued = new CountDownLatch(chunks);
        }

        /**
         * Work queued on {@code stream} from now on runs after this copy has landed: waits on the host only until every
         * chunk of it has been issued, then on the device.
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

        /** A chunk was issued (or failed); once all were, the mapping may go (its bytes are in staging or sent). */
        private void chunkDone() {
            issued.countDown();
            if (issued.getCount() == 0) {
                source = MemorySegment.NULL;
                lastIssuedNanos.accumulateAndGet(System.nanoTime(), Math::max);
            }
        }

        private void fail(RuntimeException e) {
            if (failure == null) {
                failure = e;
            }
        }
    }

    /** Chunk {@code [at, at + length)} of an upload; the lane records the upload's event after its last chunk. */
    private record Chunk(Upload upload, long at, long length, boolean lastOnLane) {
    }

    /** Queues the copy of {@code source} (any host memory, e.g. a slice of the mapping) to {@code target} at offset. */
    Upload upload(String name, MemorySegment source, DeviceBuffer target, long targetOffset) {
        return upload(name, source, null, 0, target, targetOffset);
    }

    /**
     * Queues the copy of {@code source}, a slice of the mapping of {@code file} (when not null) at {@code fileOffset}:
     * the lanes then read the file into their staging rather than copy out of the mapping, which would fault the
     * mapping's pages in one by one.
     */
    Upload upload(String name, MemorySegment source, FileChannel file, long fileOffset, DeviceBuffer target,
                  long targetOffset) {
        Upload u = new Upload(name, source, file, fileOffset, target, targetOffset);
        if (dispatcher == null) {
            for (Lane lane : lanes) {
                lane.start();
            }
            dispatcher = Thread.ofPlatform().name("zse-cuda-upload").daemon().start(this::dispatch);
        }
        pending.add(u);
        queue.add(u);
        return u;
    }

    /** Whether every queued upload has been issued (its copies queued on the lanes): nothing more will be. */
    boolean issuedAll() {
        return pending.stream().allMatch(Upload::isIssued);
    }

    private void dispatch() {
        try {
            while (true) {
                Upload u = queue.take();
                if (u.source == null) {
                    return; // close()
                }
                if (paced != null) {
                    paced.acquire();
                }
                deal(u);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The upload's chunks to the lanes in turn; each lane learns which of them is its last of this upload. */
    private void deal(Upload u) {
        int[] lastChunk = new int[LANES];
        Arrays.fill(lastChunk, -1);
        for (int c = 0; c < u.chunks; c++) {
            lastChunk[(next + c) % LANES] = c;
        }
        long size = u.source.byteSize();
        for (int c = 0; c < u.chunks; c++) {
            int lane = (next + c) % LANES;
            long at = c * CHUNK_BYTES;
            lanes[lane].chunks.add(new Chunk(u, at, Math.min(CHUNK_BYTES, size - at), lastChunk[lane] == c));
        }
        next = (next + u.chunks) % LANES;
    }

    /** Pinned staging buffers, their stream and the thread that fills them from the file. */
    private final class Lane {
        // filled in turn, each made on the lane's thread when its first chunk comes: the lanes pin their memory side by
        // side once the upload starts, not one after the other on the thread that opens the backend
        private final PinnedBuffer[] staging = new PinnedBuffer[buffers];
        private final CudaStream stream;
        private final BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        private final int index;
        private int turn;  // the buffer the next chunk fills
        private Thread thread;

        Lane(int index) {
            this.index = index;
            this.stream = new CudaStream(cuda);
        }

        void start() {
            thread = Thread.ofPlatform().name("zse-cuda-upload-" + index).daemon().start(this::run);
        }

        private void run() {
            try {
                cuda.setDevice(device);
                while (true) {
                    Chunk c = chunks.take();
                    if (c.upload() == null) {
                        return; // close()
                    }
                    try {
                        copy(c);
                    } catch (RuntimeException e) {
                        c.upload().fail(e);
                    }
                    c.upload().chunkDone();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void copy(Chunk c) {
            Upload u = c.upload();
            if (staging[turn] == null) {
                staging[turn] = new PinnedBuffer(cuda, CHUNK_BYTES);
            }
            PinnedBuffer buffer = staging[turn];
            turn = (turn + 1) % staging.length;
            MemorySegment into = buffer.writable(c.length());
            if (u.file != null) {
                readFully(u, u.fileOffset + c.at(), into);
            } else {
                MemorySegment.copy(u.source, c.at(), into, 0, c.length());
            }
            buffer.copyTo(u.target, c.length(), u.targetOffset + c.at(), stream);
            bytesUploaded.addAndGet(c.length());
            if (c.lastOnLane()) {
                CudaEvent landed = new CudaEvent(cuda);
                landed.record(stream);
                u.landed.add(landed);
            }
        }

        /** Ends the thread once the chunks queued before have been issued, then waits for their DMA. */
        void stop() {
            if (thread != null) {
                chunks.add(new Chunk(null, 0, 0, false));
                join(thread);
                thread = null;
            }
            try {
                stream.synchronize(); // no DMA reads a staging buffer or writes a weight once closed
            } catch (RuntimeException e) {
                // a device fault, already reported
            }
        }

        void close() {
            closeQuietly(stream);
            for (PinnedBuffer buffer : staging) {
                closeQuietly(buffer);
            }
        }
    }

    /** ZSE_CUDA_UPLOAD_BUFFERS: 2 when unset; 1 or 2, anything else refused. */
    static int buffersSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_BUFFERS", value, "2", "1", "2"));
    }

    /**
     * Fills {@code into} from {@code u}'s file at {@code position}. (The lanes are never interrupted: an interrupt during
     * a read would close the file's channel for every reader.)
     */
    private static void readFully(Upload u, long position, MemorySegment into) {
        ByteBuffer buffer = into.asByteBuffer();
        try {
            while (buffer.hasRemaining()) {
                int read = u.file.read(buffer, position + buffer.position());
                if (read < 0) {
                    throw new IllegalStateException(u.name + ": the file ends at byte " + (position
                            + buffer.position()) + ", inside the tensor (was it cut short while open?)");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + u.name + " from its file: " + e.getMessage(), e);
        }
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

    /**
     * When the last of the uploads queued so far was issued (System.nanoTime()): its bytes out of the mapping and its
     * last copy queued, one chunk's DMA before it lands. Empty while one is still being issued.
     */
    OptionalLong allIssuedAt() {
        long at = lastIssuedNanos.get();
        return at != 0 && issuedAll() ? OptionalLong.of(at) : OptionalLong.empty();
    }

    /** Bytes issued to the device so far. */
    long bytesUploaded() {
        return bytesUploaded.get();
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            queue.add(new Upload("(end)", null, null, 0, null, 0));
            if (paced != null) {
                paced.release(Integer.MAX_VALUE / 2);
            }
            join(dispatcher);
            dispatcher = null;
        }
        for (Lane lane : lanes) {
            if (lane != null) {
                lane.stop();
            }
        }
        for (Upload u : pending) {
            u.landed.forEach(WeightUploader::closeQuietly);
        }
        pending.clear();
        for (Lane lane : lanes) {
            if (lane != null) {
                lane.close();
            }
        }
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
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
