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
 * tensor's chunks to the lanes in turn; each lane has its own thread, pinned staging buffer and stream, so the lanes
 * copy out of the mapping on several cores at once, not one (a PCIe 5 link takes 55 GB/s, more than one core copies
 * out of the page cache). Measured on an H100 (8 lanes, 5.35 GB, interleaved): out of the mapping 19.2-20.5 GB/s,
 * by positional reads of the file 15.5-16.7; two staging buffers a lane (one filled while the other's DMA runs)
 * 14.6-17.0, as pinning and queueing took longer. Each tensor's copy ends with an event on every lane that carried
 * part of it: a compute stream waits on those ({@link Upload#orderAfter}) rather than on the whole upload, so the
 * first layers compute while the last ones are still on their way.
 */
final class WeightUploader implements AutoCloseable {
    /**
     * The bytes a lane stages and sends at a time, its pinned buffer's size: 16 MiB, or ZSE_CUDA_UPLOAD_CHUNK_MB (4, 8
     * or 16) to compare on a GPU. 4 MiB did not win in the sixth GPU run (H200, 8 lanes): 14.04 and 17.19 GB/s against
     * 18.93 and 17.16.
     */
    static final long CHUNK_BYTES = chunkSetting(System.getenv("ZSE_CUDA_UPLOAD_CHUNK_MB"));
    /**
     * A lane per two cores, 2 to 8: each lane's thread copies out of the page cache at 5-10 GB/s; ZSE_CUDA_UPLOAD_LANES
     * fixes 4, 8, 12 or 16, to compare them on a GPU (H100, 8 lanes: 21.4 GB/s of a 55 GB/s link, each lane filling
     * staging for about half of the upload's time). More lost in the sixth GPU run (H200): 12 lanes 17.90 and 16.74
     * GB/s, 16 lanes 15.71 and 14.40, against 18.93 and 17.16 at 8, each lane's pinning and queueing slower the more
     * lanes made those calls (measured before the lanes pinned as the backend opens).
     */
    static final int LANES = lanesSetting(System.getenv("ZSE_CUDA_UPLOAD_LANES"),
            Runtime.getRuntime().availableProcessors());
    /**
     * Whether the lanes read the file into staging (positional reads) rather than copy out of the mapping and let its
     * pages go: ZSE_CUDA_UPLOAD_SOURCE, to compare them on a GPU. The mapping won on an H100 before its pages were let
     * go after each chunk (19.2-20.5 against 15.5-16.7 GB/s); letting them go costs a copy here about a fifth (2 cores:
     * 12.1 against 15.7 GB/s kept, reads 18.2); the sixth GPU run (H200) found them even, 19.31 and 17.52 GB/s by
     * reads against 18.93 and 17.16.
     */
    static final boolean READS = sourceSetting(System.getenv("ZSE_CUDA_UPLOAD_SOURCE")).equals("reads");

    private final CudaLibrary cuda;
    private final int device;
    // the lanes' time, summed over them: pinning staging, waiting for a buffer's DMA, filling staging, queueing copies
    private final AtomicLong pinNanos = new AtomicLong();
    private final AtomicLong waitNanos = new AtomicLong();
    private final AtomicLong fillNanos = new AtomicLong();
    private final AtomicLong queueNanos = new AtomicLong();
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
            for (Lane lane : lanes) {
                lane.start();
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
        private final FileChannel file;   // the file source maps at fileOffset, or null (not a file's mapping)
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

    /**
     * Queues the copy of {@code source}, a slice of the mapping of {@code file} (when not null) at {@code fileOffset}:
     * a file cut short since it was mapped then fails the copy with the tensor's name, before the copy reads past
     * its end.
     */
    Upload upload(String name, MemorySegment source, FileChannel file, long fileOffset, DeviceBuffer target,
                  long targetOffset) {
        Upload u = new Upload(name, source, file, fileOffset, target, targetOffset);
        if (dispatcher == null) {
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

    /** A pinned staging buffer, its stream and the thread that fills it from the mapping. */
    private final class Lane {
        // made on the lane's thread as it starts, with the backend: the lanes pin their memory side by side, not one
        // after the other on the thread that opens the backend, and before the model asks for its weights (the sixth
        // GPU run's 8 lanes pinned for 275-317 ms summed inside a 281-312 ms upload, each pin slower for the others)
        private PinnedBuffer staging;
        private final CudaStream stream;
        private final BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        private final int index;
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
                pin();
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

        private void pin() {
            try {
                long t0 = System.nanoTime();
                staging = new PinnedBuffer(cuda, CHUNK_BYTES);
                pinNanos.addAndGet(System.nanoTime() - t0);
            } catch (RuntimeException e) {
                // the first chunk pins again, and fails its upload with the reason
            }
        }

        private void copy(Chunk c) {
            Upload u = c.upload();
            long t0 = System.nanoTime();
            if (staging == null) {
                staging = new PinnedBuffer(cuda, CHUNK_BYTES);
            }
            long t1 = System.nanoTime();
            MemorySegment into = staging.writable(c.length());
            long t2 = System.nanoTime();
            copyOut(u, c, into);
            long t3 = System.nanoTime();
            staging.copyTo(u.target, c.length(), u.targetOffset + c.at(), stream);
            pinNanos.addAndGet(t1 - t0);
            waitNanos.addAndGet(t2 - t1);
            fillNanos.addAndGet(t3 - t2);
            queueNanos.addAndGet(System.nanoTime() - t3);
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
            closeQuietly(staging);
        }
    }

    /** ZSE_CUDA_UPLOAD_SOURCE: mapping (also unset) or reads; anything else refused. */
    static String sourceSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_SOURCE", value, "mapping", "mapping", "reads");
    }

    /** ZSE_CUDA_UPLOAD_CHUNK_MB: 4, 8 or 16 (also unset) MiB, in bytes; anything else refused. */
    static long chunkSetting(String value) {
        return Long.parseLong(BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_CHUNK_MB", value, "16", "4", "8", "16")) << 20;
    }

    /** ZSE_CUDA_UPLOAD_LANES: 4, 8, 12 or 16; unset, a lane per two of {@code cores}, 2 to 8. */
    static int lanesSetting(String value, int cores) {
        String lanes = BenchmarkSwitch.choice("ZSE_CUDA_UPLOAD_LANES", value, "", "4", "8", "12", "16");
        return lanes.isEmpty() ? Math.clamp(cores / 2, 2, 8) : Integer.parseInt(lanes);
    }

    /** Where the lanes' time went so far, in milliseconds summed over the lanes. */
    record LaneTimes(double pinMs, double waitMs, double fillMs, double queueMs) {
        @Override
        public String toString() {
            return String.format("lanes' time summed: pinning staging %.1f ms, waiting for a buffer's DMA %.1f ms, "
                    + "filling staging %.1f ms, queueing copies %.1f ms", pinMs, waitMs, fillMs, queueMs);
        }
    }

    LaneTimes laneTimes() {
        return new LaneTimes(pinNanos.get() / 1e6, waitNanos.get() / 1e6, fillNanos.get() / 1e6,
                queueNanos.get() / 1e6);
    }

    /**
     * Copies chunk {@code c} of {@code u} out of the mapping into {@code into}, then lets its pages go from the resident
     * set (with {@link #READS}, reads it from the file instead). The mapping of a file cut short since it was mapped
     * would fault past the file's end: the file's size is checked first, and a fault (it was cut during the copy) fails
     * the upload by name too rather than ending the lane's thread.
     */
    private static void copyOut(Upload u, Chunk c, MemorySegment into) {
        if (u.file != null) {
            long end = fileSize(u);
            if (end < u.fileOffset + c.at() + c.length()) {
                throw cutShort(u, end);
            }
        }
        if (READS && u.file != null) {
            readFully(u, u.fileOffset + c.at(), into);
            return;
        }
        MemorySegment copied = u.source.asSlice(c.at(), c.length());
        try {
            into.copyFrom(copied);
            if (copied.isMapped()) {
                // the pages leave the process's resident set once in staging (the file's stay in the page cache): an 8B
                // model's upload otherwise leaves 5 GB more resident (H100: peak RSS 5680 MiB, 893 with reads)
                copied.unload();
            }
        } catch (InternalError e) { // the JVM's report of a fault in a copy out of a mapping
            throw new IllegalStateException(u.name + ": reading it from the mapped file failed"
                    + (u.file == null ? "" : " (the file is now " + fileSize(u) + " bytes)") + ": " + e.getMessage(),
                    e);
        }
    }

    /**
     * Fills {@code into} from {@code u}'s file at {@code position}. (The lanes are never interrupted: an interrupt
     * during a read would close the file's channel for every reader.)
     */
    private static void readFully(Upload u, long position, MemorySegment into) {
        ByteBuffer buffer = into.asByteBuffer();
        try {
            while (buffer.hasRemaining()) {
                if (u.file.read(buffer, position + buffer.position()) < 0) {
                    throw cutShort(u, position + buffer.position());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + u.name + " from its file: " + e.getMessage(), e);
        }
    }

    private static IllegalStateException cutShort(Upload u, long end) {
        return new IllegalStateException(u.name + ": the file ends at byte " + end
                + ", inside the tensor (was it cut short while open?)");
    }

    private static long fileSize(Upload u) {
        try {
            return u.file.size();
        } catch (IOException e) {
            throw new UncheckedIOException("reading the size of the file of " + u.name + ": " + e.getMessage(), e);
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
