package io.zse.backend.cuda;

import io.zse.format.MappedFiles;

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
 * tensor's chunks to the lanes in turn; each lane has its own thread, pinned staging and stream, so the lanes copy out
 * of the mapping on several cores at once, not one (a PCIe 5 link takes 55 GB/s, more than one core copies out of the
 * page cache). A lane queues the copy of what it staged, or hands it to the sender thread that queues every lane's
 * ({@link UploadSettings#sender}). Measured on an H100 (8 lanes, 5.35 GB, interleaved): two staging buffers a lane (one
 * filled while the other's DMA runs) 14.6-17.0 GB/s against one's 19.2-20.5, as pinning (then on the way of the upload)
 * and queueing took longer. Each tensor's copy ends with an event on every lane that carried
 * part of it: a compute stream waits on those ({@link Upload#orderAfter}) rather than on the whole upload, so the
 * first layers compute while the last ones are still on their way.
 */
final class WeightUploader implements AutoCloseable {
    private final CudaLibrary cuda;
    private final int device;
    private final UploadSettings settings;
    // the upload threads' time, summed over them: pinning staging, waiting for a chunk to stage (a lane that has staged
    // one already: the model had not asked for more yet, or the chunks went to other lanes), waiting for a free buffer
    // (its DMA done, and with a sender its copy queued), filling staging, queueing copies (the lanes', or the sender's)
    private final AtomicLong pinNanos = new AtomicLong();
    private final AtomicLong idleNanos = new AtomicLong();
    private final AtomicLong waitNanos = new AtomicLong();
    private final AtomicLong fillNanos = new AtomicLong();
    private final AtomicLong queueNanos = new AtomicLong();
    private final Lane[] lanes;
    private final Sender sender;                             // null where each lane queues its own copies
    private final BlockingQueue<Upload> queue = new LinkedBlockingQueue<>();
    private final List<Upload> pending = new ArrayList<>(); // queued by the caller and not yet finished
    private final Semaphore paced;                           // tests: one permit per upload the dispatcher may issue
    private final AtomicLong bytesUploaded = new AtomicLong();
    private final AtomicLong lastIssuedNanos = new AtomicLong(); // when an upload's last chunk was issued, latest
    private volatile long firstAskedNanos;                   // when the caller queued its first and last uploads
    private volatile long lastAskedNanos;
    private Thread dispatcher;
    private int next;                                        // the lane the next chunk goes to

    /** With {@code paced} non-null the dispatcher takes one of its permits before each upload (for tests). */
    WeightUploader(CudaLibrary cuda, int device, UploadSettings settings, Semaphore paced) {
        this.cuda = cuda;
        this.device = device;
        this.settings = settings;
        this.paced = paced;
        this.lanes = new Lane[settings.lanes()];
        this.sender = settings.sender() ? new Sender() : null;
        try {
            for (int i = 0; i < lanes.length; i++) {
                lanes[i] = new Lane(i);
            }
            for (Lane lane : lanes) {
                lane.start();
            }
            if (sender != null) {
                sender.start();
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
            this.chunks = source == null ? 0 : (int) Math.ceilDiv(source.byteSize(), settings.chunkBytes());
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
        lastAskedNanos = System.nanoTime();
        if (firstAskedNanos == 0) {
            firstAskedNanos = lastAskedNanos;
        }
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
        int[] lastChunk = new int[lanes.length];
        Arrays.fill(lastChunk, -1);
        for (int c = 0; c < u.chunks; c++) {
            lastChunk[(next + c) % lanes.length] = c;
        }
        long size = u.source.byteSize();
        long chunkBytes = settings.chunkBytes();
        for (int c = 0; c < u.chunks; c++) {
            int lane = (next + c) % lanes.length;
            long at = c * chunkBytes;
            lanes[lane].chunks.add(new Chunk(u, at, Math.min(chunkBytes, size - at), lastChunk[lane] == c));
        }
        next = (next + u.chunks) % lanes.length;
    }

    /** A chunk in a lane's staging buffer, to be queued on the lane's stream. */
    private record Staged(Lane lane, Chunk chunk, PinnedBuffer buffer) {
    }

    /** Pinned staging buffers, their stream and the thread that fills them from the mapping. */
    private final class Lane {
        // pinned on the lane's thread as it starts, with the backend: the lanes pin their memory side by side, not one
        // after the other on the thread that opens the backend, and before the model asks for its weights (the sixth
        // GPU run's 8 lanes pinned for 275-317 ms summed inside a 281-312 ms upload, each pin slower for the others)
        private final List<PinnedBuffer> staging = new ArrayList<>();
        private final BlockingQueue<PinnedBuffer> free = new LinkedBlockingQueue<>(); // neither filling nor queued
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
            RuntimeException broken = null; // every chunk dealt to a lane that cannot start fails with why
            try {
                cuda.setDevice(device);
                pin();
            } catch (RuntimeException e) {
                broken = e;
            }
            try {
                boolean staged = false;
                while (true) {
                    long t0 = System.nanoTime();
                    Chunk c = chunks.take();
                    if (c.upload() == null) {
                        return; // close()
                    }
                    if (staged) {
                        idleNanos.addAndGet(System.nanoTime() - t0);
                    }
                    staged = true;
                    try {
                        if (broken != null) {
                            throw broken;
                        }
                        fill(c);
                    } catch (RuntimeException | Error e) {
                        // the upload fails with the reason, and nothing waits for it for ever
                        c.upload().fail(e instanceof RuntimeException r ? r : new IllegalStateException(e));
                        c.upload().chunkDone();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void pin() {
            long t0 = System.nanoTime();
            try {
                while (staging.size() < settings.buffersPerLane()) {
                    free.add(newBuffer());
                }
            } catch (RuntimeException e) {
                // the first chunk without a buffer pins again, and fails its upload with the reason
            }
            pinNanos.addAndGet(System.nanoTime() - t0);
        }

        private PinnedBuffer newBuffer() {
            PinnedBuffer buffer = new PinnedBuffer(cuda, settings.chunkBytes());
            staging.add(buffer);
            return buffer;
        }

        /** A free staging buffer: one whose copy was queued, or a new one where fewer than a lane's were pinned. */
        private PinnedBuffer takeBuffer() throws InterruptedException {
            PinnedBuffer buffer = free.poll();
            if (buffer != null) {
                return buffer;
            }
            if (staging.size() < settings.buffersPerLane()) {
                long t0 = System.nanoTime();
                buffer = newBuffer();
                pinNanos.addAndGet(System.nanoTime() - t0);
                return buffer;
            }
            return free.take();
        }

        /** Stages chunk c, then queues its copy or hands it to the sender; the upload learns of it either way. */
        private void fill(Chunk c) throws InterruptedException {
            long t0 = System.nanoTime();
            PinnedBuffer buffer = takeBuffer();
            MemorySegment into;
            try {
                into = buffer.writable(c.length());
                long t1 = System.nanoTime();
                waitNanos.addAndGet(t1 - t0);
                copyOut(c.upload(), c, into, settings.reads());
                fillNanos.addAndGet(System.nanoTime() - t1);
            } catch (RuntimeException e) {
                free.add(buffer);
                throw e;
            }
            Staged staged = new Staged(this, c, buffer);
            if (sender == null) {
                issue(staged);
            } else {
                sender.staged.add(staged);
            }
        }

        /** Ends the thread once the chunks queued before have been staged. */
        void stop() {
            if (thread != null) {
                chunks.add(new Chunk(null, 0, 0, false));
                join(thread);
                thread = null;
            }
        }

        /** Waits for the copies queued on the lane's stream: no DMA reads a staging buffer or writes a weight after. */
        void drain() {
            try {
                stream.synchronize();
            } catch (RuntimeException e) {
                // a device fault, already reported
            }
        }

        void close() {
            closeQuietly(stream);
            staging.forEach(WeightUploader::closeQuietly);
        }
    }

    /**
     * Queues the copy of a staged chunk on its lane's stream, on the lane's thread or the sender's, then frees the
     * buffer for its lane (its next fill waits for this copy: {@link PinnedBuffer#writable}) and counts the chunk done;
     * the lane's event follows its last chunk of the upload.
     */
    private void issue(Staged staged) {
        Chunk c = staged.chunk();
        Upload u = c.upload();
        CudaStream stream = staged.lane().stream;
        long t0 = System.nanoTime();
        try {
            staged.buffer().copyTo(u.target, c.length(), u.targetOffset + c.at(), stream);
            bytesUploaded.addAndGet(c.length());
            if (c.lastOnLane()) {
                CudaEvent landed = new CudaEvent(cuda);
                landed.record(stream);
                u.landed.add(landed);
            }
        } catch (RuntimeException e) {
            u.fail(e);
        } finally {
            queueNanos.addAndGet(System.nanoTime() - t0);
            staged.lane().free.add(staged.buffer());
            u.chunkDone();
        }
    }

    /**
     * The thread that queues every lane's copies in the order they were staged (a lane's in its order), so that the
     * driver's calls come from one thread and not from every lane at once.
     */
    private final class Sender {
        private final BlockingQueue<Staged> staged = new LinkedBlockingQueue<>();
        private Thread thread;

        void start() {
            thread = Thread.ofPlatform().name("zse-cuda-upload-sender").daemon().start(this::run);
        }

        private void run() {
            RuntimeException broken = null; // every chunk staged for a sender that cannot start fails with why
            try {
                cuda.setDevice(device);
            } catch (RuntimeException e) {
                broken = e;
            }
            try {
                while (true) {
                    Staged s = staged.take();
                    if (s.chunk() == null) {
                        return; // close()
                    }
                    if (broken == null) {
                        issue(s);
                    } else {
                        s.chunk().upload().fail(broken);
                        s.lane().free.add(s.buffer());
                        s.chunk().upload().chunkDone();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Ends the thread once what the lanes staged before has been queued. */
        void stop() {
            if (thread != null) {
                staged.add(new Staged(null, null, null));
                join(thread);
                thread = null;
            }
        }
    }

    /**
     * How the weights go (the settings), where the upload threads' time went so far, summed over them, and over how
     * long the caller asked for the uploads (the first to the last call of {@link #upload}).
     */
    String describe() {
        return settings.describe() + String.format("; threads' time summed: pinning staging %.1f ms, waiting for a "
                + "chunk to stage %.1f ms, waiting for a free buffer %.1f ms, filling staging %.1f ms, queueing copies "
                + "%.1f ms; the weights asked for over %.1f ms", pinNanos.get() / 1e6, idleNanos.get() / 1e6,
                waitNanos.get() / 1e6, fillNanos.get() / 1e6, queueNanos.get() / 1e6,
                (lastAskedNanos - firstAskedNanos) / 1e6);
    }

    /**
     * Copies chunk {@code c} of {@code u} out of the mapping into {@code into}, then lets its pages go from the resident
     * set (with {@code reads}, reads it from the file instead). The mapping of a file cut short since it was mapped
     * would fault past the file's end: the file's size is checked first, and a fault (it was cut during the copy) fails
     * the upload by name too rather than ending the lane's thread.
     */
    private static void copyOut(Upload u, Chunk c, MemorySegment into, boolean reads) {
        if (u.file != null) {
            long end = fileSize(u);
            if (end < u.fileOffset + c.at() + c.length()) {
                throw cutShort(u, end);
            }
        }
        if (reads && u.file != null) {
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
        return new IllegalStateException(u.name + ": the file ends at byte " + end + ", inside the tensor: "
                + MappedFiles.REWRITTEN_IN_PLACE);
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
        if (sender != null) {
            sender.stop();
        }
        for (Lane lane : lanes) {
            if (lane != null) {
                lane.drain();
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
