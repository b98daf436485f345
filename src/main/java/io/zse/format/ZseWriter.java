package io.zse.format;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * Writes a {@code .zse} file. The layout is fixed up front from the sections and the planned tensors, so tensor bytes
 * stream straight to their final offsets (memory stays bounded by the caller's chunks); the index, which holds the
 * checksums, and the header are written last. Everything goes to a hidden temporary file that is renamed over the
 * target only when complete, so an interrupted write never leaves a file that looks valid.
 */
public final class ZseWriter implements AutoCloseable {
    private final Path target;
    private static final AtomicLong WRITERS = new AtomicLong();

    private final Path temporary;
    private final FileChannel channel;
    private final Map<SectionKind, byte[]> sections;
    private final List<TensorInfo> placed;
    private final long indexLength;
    private final long dataOffset;
    private final long fileLength;
    /** Deletes the temporary file when the JVM stops mid-write (Ctrl-C, SIGTERM), which runs no {@link #close}. */
    private final Thread cleanup;
    private int next;
    private boolean finished;

    private ZseWriter(Path target, Path temporary, FileChannel channel, Map<SectionKind, byte[]> sections,
                      List<TensorInfo> placed, long indexLength, long dataOffset, long fileLength) {
        this.target = target;
        this.temporary = temporary;
        this.channel = channel;
        this.sections = sections;
        this.placed = placed;
        this.indexLength = indexLength;
        this.dataOffset = dataOffset;
        this.fileLength = fileLength;
        this.cleanup = new Thread(() -> {
            try {
                Files.deleteIfExists(temporary);
            } catch (IOException e) {
                // the JVM is going: nothing left to tell
            }
        }, "zse-writer-cleanup");
    }

    /**
     * @param sections metadata sections other than the tensor index (config is required)
     * @param tensors  planned tensors ({@link TensorInfo#planned}), in the order their bytes will be written
     */
    public static ZseWriter create(Path target, Map<SectionKind, byte[]> sections, List<TensorInfo> tensors)
            throws IOException {
        if (!sections.containsKey(SectionKind.CONFIG)) {
            throw new IllegalArgumentException("a .zse file needs a config section");
        }
        Map<SectionKind, byte[]> ordered = new LinkedHashMap<>();
        ordered.put(SectionKind.CONFIG, sections.get(SectionKind.CONFIG));
        ordered.put(SectionKind.TENSOR_INDEX, null);
        sections.forEach((kind, bytes) -> {
            if (kind != SectionKind.CONFIG && kind != SectionKind.TENSOR_INDEX) {
                ordered.put(kind, bytes);
            }
        });
        long indexLength = TensorIndex.encodedSize(tensors);
        long cursor = ZseLayout.PREAMBLE_SIZE + ZseLayout.HEADER_FIXED_SIZE
                + (long) ordered.size() * ZseLayout.SECTION_ENTRY_SIZE;
        for (Map.Entry<SectionKind, byte[]> e : ordered.entrySet()) {
            cursor = ZseLayout.alignUp(cursor, ZseLayout.SECTION_ALIGNMENT);
            cursor += e.getValue() == null ? indexLength : e.getValue().length;
        }
        long dataOffset = ZseLayout.alignUp(cursor, ZseLayout.DATA_ALIGNMENT);
        List<TensorInfo> placed = new ArrayList<>(tensors.size());
        cursor = dataOffset;
        for (TensorInfo t : tensors) {
            long data = cursor;
            cursor = ZseLayout.alignUp(data + t.dataLength(), ZseLayout.TENSOR_ALIGNMENT);
            long scales = 0;
            if (t.scalesLength() > 0) {
                scales = cursor;
                cursor = ZseLayout.alignUp(scales + t.scalesLength(), ZseLayout.TENSOR_ALIGNMENT);
            }
            placed.add(t.withPlacement(data, scales));
        }
        long fileLength = cursor;

        if (Files.isDirectory(target)) {
            throw new IOException(target + " is a directory: the output must be a file");
        }
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < fileLength) {
            throw new IOException("not enough disk space in " + dir + ": the file needs " + mib(fileLength)
                    + " MiB, " + mib(free) + " MiB are free");
        }
        // a name of its own: two conversions to one output once wrote into the same temporary file, and the one that
        // renamed it last reported success over the other's bytes
        Path temporary = dir.resolve("." + target.getFileName() + "." + ProcessHandle.current().pid() + "-"
                + WRITERS.incrementAndGet() + ".partial");
        FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                StandardOpenOption.READ);
        ZseWriter writer = new ZseWriter(target, temporary, channel, ordered, placed, indexLength, dataOffset,
                fileLength);
        try {
            Runtime.getRuntime().addShutdownHook(writer.cleanup);
        } catch (IllegalStateException e) {
            writer.close(); // the JVM is already stopping: no hook would run
            throw new IOException("cannot write " + target + ": the JVM is shutting down", e);
        }
        return writer;
    }

    private static long mib(long bytes) {
        return (bytes + (1 << 20) - 1) >> 20;
    }

    /** Total size of the file being written. */
    public long fileLength() {
        return fileLength;
    }

    /** The sink for the next tensor, in plan order. */
    public TensorSink nextTensor() {
        if (next >= placed.size()) {
            throw new IllegalStateException("all " + placed.size() + " tensors are written");
        }
        if (next > 0 && !sink.done) {
            throw new IllegalStateException("tensor " + placed.get(next - 1).name() + " is not complete");
        }
        sink = new TensorSink(placed.get(next), next);
        next++;
        return sink;
    }

    private TensorSink sink;

    /** Streams one tensor's data and scale bytes to their places, computing checksums on the way. */
    public final class TensorSink {
        private final TensorInfo info;
        private final int index;
        private final CRC32C dataCrc = new CRC32C();
        private final CRC32C scalesCrc = new CRC32C();
        private long dataWritten;
        private long scalesWritten;
        private boolean done;

        private TensorSink(TensorInfo info, int index) {
            this.info = info;
            this.index = index;
        }

        public TensorInfo info() {
            return info;
        }

        public void writeData(MemorySegment bytes) throws IOException {
            dataWritten = append(bytes, info.dataOffset(), dataWritten, info.dataLength(), dataCrc, "data");
        }

        public void writeScales(MemorySegment bytes) throws IOException {
            scalesWritten = append(bytes, info.scalesOffset(), scalesWritten, info.scalesLength(), scalesCrc, "scales");
        }

        private long append(MemorySegment bytes, long base, long written, long limit, CRC32C crc, String what)
                throws IOException {
            if (written + bytes.byteSize() > limit) {
                throw new IllegalStateException("tensor " + info.name() + ": more " + what + " bytes than the "
                        + limit + " planned");
            }
            ByteBuffer buffer = bytes.asByteBuffer();
            crc.update(buffer.duplicate());
            long position = base + written;
            while (buffer.hasRemaining()) {
                position += channel.write(buffer, position);
            }
            return written + bytes.byteSize();
        }

        /** Checks every planned byte arrived and records the checksums. */
        public void finish() {
            if (dataWritten != info.dataLength() || scalesWritten != info.scalesLength()) {
                throw new IllegalStateException("tensor " + info.name() + ": wrote " + dataWritten + "/"
                        + info.dataLength() + " data and " + scalesWritten + "/" + info.scalesLength() + " scale bytes");
            }
            int scales = info.scalesLength() == 0 ? 0 : (int) scalesCrc.getValue();
            placed.set(index, info.withCrcs((int) dataCrc.getValue(), scales));
            done = true;
        }
    }

    /** Writes index, sections, header and preamble, syncs, and renames the file over the target. */
    public void finish() throws IOException {
        if (next != placed.size() || (sink != null && !sink.done)) {
            throw new IllegalStateException("only " + next + " of " + placed.size() + " tensors were written");
        }
        sections.put(SectionKind.TENSOR_INDEX, TensorIndex.encode(placed));
        if (sections.get(SectionKind.TENSOR_INDEX).length != indexLength) {
            throw new IllegalStateException("tensor index changed size");
        }
        long headerLength = ZseLayout.HEADER_FIXED_SIZE + (long) sections.size() * ZseLayout.SECTION_ENTRY_SIZE;
        ByteBuffer header = ByteBuffer.allocate((int) headerLength).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(sections.size()).putInt(0);
        long cursor = ZseLayout.PREAMBLE_SIZE + headerLength;
        for (Map.Entry<SectionKind, byte[]> e : sections.entrySet()) {
            cursor = ZseLayout.alignUp(cursor, ZseLayout.SECTION_ALIGNMENT);
            byte[] body = e.getValue();
            header.putInt(e.getKey().code()).putInt(0).putLong(cursor).putLong(body.length)
                    .putInt(crc(body)).putInt(0);
            writeFully(ByteBuffer.wrap(body), cursor);
            cursor += body.length;
        }
        header.flip();
        ByteBuffer preamble = ByteBuffer.allocate(ZseLayout.PREAMBLE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        preamble.put(ZseLayout.MAGIC).putShort((short) ZseLayout.MAJOR_VERSION)
                .putShort((short) ZseLayout.MINOR_VERSION).putInt(0)
                .putLong(ZseLayout.PREAMBLE_SIZE).putLong(headerLength)
                .putLong(dataOffset).putLong(fileLength - dataOffset).putLong(fileLength)
                .putInt(crc(header.array()));
        preamble.putInt(crc(java.util.Arrays.copyOf(preamble.array(), ZseLayout.OFF_PREAMBLE_CRC)));
        preamble.flip();
        writeFully(header, ZseLayout.PREAMBLE_SIZE);
        writeFully(preamble, 0);
        channel.truncate(fileLength);
        if (channel.size() < fileLength) {
            // Zero-fill the padding after the last region (sparse where the file system allows).
            writeFully(ByteBuffer.allocate(1), fileLength - 1);
        }
        channel.force(true);
        channel.close();
        try {
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
        }
        finished = true;
        forgetCleanup();
    }

    private void writeFully(ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            position += channel.write(buffer, position);
        }
    }

    private static int crc(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    /** Abandons an unfinished file: the temporary file is deleted, the target is untouched. */
    @Override
    public void close() throws IOException {
        if (!finished) {
            channel.close();
            Files.deleteIfExists(temporary);
            forgetCleanup();
        }
    }

    /** The hook is done with once the temporary file is gone (renamed or deleted); writers must not pile up hooks. */
    private void forgetCleanup() {
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down, and runs the hook, which finds nothing left to delete
        }
    }
}
