package io.zse.format;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32C;

import static io.zse.format.LittleEndian.INT;
import static io.zse.format.LittleEndian.LONG;
import static io.zse.format.LittleEndian.SHORT;

/**
 * A {@code .zse} file mapped once into memory. {@link #open} checks structure and metadata checksums (cost independent
 * of the weight bytes); {@link #verify} also checks every tensor. Tensor views are slices of the one mapping; the file
 * stays open beside it, so a device upload can check that the file still holds a tensor before it copies it out (a
 * mapping read past the file's end faults).
 */
public final class ZseFile implements AutoCloseable {
    private final Path path;
    private final Arena arena;
    private final MemorySegment mapping;
    private final FileChannel channel; // the file mapped, open until close()
    private final int majorVersion;
    private final int minorVersion;
    private final long dataOffset;
    private final Map<SectionKind, MemorySegment> sections;
    private final Map<String, TensorInfo> tensors;
    private volatile PageCacheReadahead readahead; // openToRun's, stopped by close()

    private ZseFile(Path path, Arena arena, MemorySegment mapping, FileChannel channel, int majorVersion,
                    int minorVersion, long dataOffset, Map<SectionKind, MemorySegment> sections,
                    Map<String, TensorInfo> tensors) {
        this.path = path;
        this.arena = arena;
        this.mapping = mapping;
        this.channel = channel;
        this.majorVersion = majorVersion;
        this.minorVersion = minorVersion;
        this.dataOffset = dataOffset;
        this.sections = sections;
        this.tensors = tensors;
    }

    /** Maps and checks the file; throws {@link ZseFormatException} naming what is wrong. */
    public static ZseFile open(Path path) throws IOException {
        if (!Files.exists(path)) {
            throw new NoSuchFileException(path.toString(), null, "no such file");
        }
        if (!Files.isRegularFile(path)) {
            throw new ZseFormatException(path, "file", "not a regular file");
        }
        FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        Arena arena = Arena.ofShared();
        try {
            MemorySegment mapping = MappedFiles.map(path, channel, arena);
            return read(path, arena, mapping, channel);
        } catch (IOException | RuntimeException e) {
            arena.close();
            channel.close();
            throw e;
        }
    }

    /**
     * {@link #open}, then the tensors' bytes read into the page cache in the background while the caller goes on
     * ({@link PageCacheReadahead}): the small ones first (norms and biases, which loading the model reads at once),
     * then the data area in file order. For the commands about to run the model, whose file may not be cached yet (a
     * fresh pod). {@link #close} stops the reading.
     */
    public static ZseFile openToRun(Path path) throws IOException {
        ZseFile file = open(path);
        try {
            List<MemorySegment> small = file.tensors.values().stream()
                    .filter(t -> t.dataLength() < PageCacheReadahead.CHUNK_BYTES)
                    .map(t -> file.mapping.asSlice(t.dataOffset(), t.dataLength())).toList();
            file.readahead = PageCacheReadahead.start(file.mapping, file.dataOffset, PageCacheReadahead.budget(),
                    small).orElse(null);
        } catch (RuntimeException e) {
            file.close(); // a bad ZSE_READAHEAD: the caller never gets the file to close
            throw e;
        }
        return file;
    }

    /** Whether the file was opened to run, its tensors read ahead (tests). */
    boolean readingAhead() {
        return readahead != null;
    }

    private static ZseFile read(Path path, Arena arena, MemorySegment file, FileChannel channel)
            throws ZseFormatException {
        long size = file.byteSize();
        if (size < ZseLayout.PREAMBLE_SIZE) {
            throw new ZseFormatException(path, "preamble", "file is " + size + " bytes, shorter than the "
                    + ZseLayout.PREAMBLE_SIZE + "-byte preamble (truncated or not a .zse file)");
        }
        byte[] magic = file.asSlice(0, 8).toArray(ValueLayout.JAVA_BYTE);
        if (!java.util.Arrays.equals(magic, ZseLayout.MAGIC)) {
            throw new ZseFormatException(path, "preamble", "wrong magic bytes: not a .zse file");
        }
        int major = Short.toUnsignedInt(file.get(SHORT, ZseLayout.OFF_MAJOR));
        int minor = Short.toUnsignedInt(file.get(SHORT, ZseLayout.OFF_MINOR));
        if (crc(file.asSlice(0, ZseLayout.OFF_PREAMBLE_CRC)) != file.get(INT, ZseLayout.OFF_PREAMBLE_CRC)) {
            throw new ZseFormatException(path, "preamble", "checksum mismatch (preamble is corrupt)");
        }
        if (major > ZseLayout.MAJOR_VERSION) {
            throw new ZseFormatException(path, "preamble", "format version " + major + "." + minor
                    + " is newer than this reader (" + ZseLayout.MAJOR_VERSION + "." + ZseLayout.MINOR_VERSION
                    + "): upgrade zse to read it");
        }
        if (major < 1) {
            throw new ZseFormatException(path, "preamble", "format version " + major + "." + minor + " is not valid");
        }
        long fileLength = file.get(LONG, ZseLayout.OFF_FILE_LENGTH);
        if (fileLength != size) {
            throw new ZseFormatException(path, "preamble", "file is " + size + " bytes but its preamble says "
                    + fileLength + (size < fileLength ? " (truncated)" : " (trailing bytes)"));
        }
        long headerOffset = file.get(LONG, ZseLayout.OFF_HEADER_OFFSET);
        long headerLength = file.get(LONG, ZseLayout.OFF_HEADER_LENGTH);
        long dataOffset = file.get(LONG, ZseLayout.OFF_DATA_OFFSET);
        long dataLength = file.get(LONG, ZseLayout.OFF_DATA_LENGTH);
        if (headerOffset != ZseLayout.PREAMBLE_SIZE || headerLength < ZseLayout.HEADER_FIXED_SIZE
                || dataOffset % ZseLayout.DATA_ALIGNMENT != 0 || headerLength > dataOffset - headerOffset
                || dataOffset > size || dataLength != size - dataOffset) {
            throw new ZseFormatException(path, "preamble", "inconsistent layout: header at " + headerOffset + "+"
                    + headerLength + ", data at " + dataOffset + "+" + dataLength + ", file " + size + " bytes");
        }
        MemorySegment header = file.asSlice(headerOffset, headerLength);
        if (crc(header) != file.get(INT, ZseLayout.OFF_HEADER_CRC)) {
            throw new ZseFormatException(path, "header", "checksum mismatch (header is corrupt)");
        }
        Map<SectionKind, MemorySegment> sections = readSections(path, file, header, headerOffset + headerLength,
                dataOffset);
        MemorySegment index = sections.get(SectionKind.TENSOR_INDEX);
        if (index == null || !sections.containsKey(SectionKind.CONFIG)) {
            throw new ZseFormatException(path, "header", "required section "
                    + (index == null ? "tensor-index" : "config") + " is missing");
        }
        Map<String, TensorInfo> tensors = placeTensors(path, TensorIndex.decode(path, index), dataOffset, size);
        return new ZseFile(path, arena, file, channel, major, minor, dataOffset, sections, tensors);
    }

    private static Map<SectionKind, MemorySegment> readSections(Path path, MemorySegment file, MemorySegment header,
                                                                long metadataStart, long dataOffset)
            throws ZseFormatException {
        long count = Integer.toUnsignedLong(header.get(INT, 0));
        if (header.get(INT, 4) != 0 || header.byteSize() != ZseLayout.HEADER_FIXED_SIZE
                + count * ZseLayout.SECTION_ENTRY_SIZE) {
            throw new ZseFormatException(path, "header", "section table of " + count + " entries does not match the "
                    + header.byteSize() + "-byte header");
        }
        Map<SectionKind, MemorySegment> sections = new EnumMap<>(SectionKind.class);
        long cursor = metadataStart;
        for (int i = 0; i < count; i++) {
            long e = ZseLayout.HEADER_FIXED_SIZE + (long) i * ZseLayout.SECTION_ENTRY_SIZE;
            int code = header.get(INT, e);
            long offset = header.get(LONG, e + 8);
            long length = header.get(LONG, e + 16);
            int expectedCrc = header.get(INT, e + 24);
            SectionKind kind = SectionKind.fromCode(code);
            String part = "section " + (kind == null ? "kind " + code : kind.label());
            if (header.get(INT, e + 4) != 0 || header.get(INT, e + 28) != 0) {
                throw new ZseFormatException(path, part, "reserved fields are not zero");
            }
            if (offset < cursor || offset % ZseLayout.SECTION_ALIGNMENT != 0 || length < 0
                    || length > dataOffset - offset) {
                throw new ZseFormatException(path, part, "offset " + offset + " length " + length
                        + " is outside the metadata area [" + cursor + ", " + dataOffset + ") or misaligned");
            }
            checkZero(path, file, cursor, offset, "padding before " + part);
            MemorySegment body = file.asSlice(offset, length);
            if (crc(body) != expectedCrc) {
                throw new ZseFormatException(path, part, "checksum mismatch (section is corrupt)");
            }
            if (kind != null && sections.put(kind, body) != null) {
                throw new ZseFormatException(path, part, "appears twice");
            }
            cursor = offset + length;
        }
        checkZero(path, file, cursor, dataOffset, "padding before the data area");
        return sections;
    }

    private static Map<String, TensorInfo> placeTensors(Path path, List<TensorInfo> list, long dataOffset, long size)
            throws ZseFormatException {
        Map<String, TensorInfo> byName = new LinkedHashMap<>();
        List<long[]> regions = new ArrayList<>();
        for (TensorInfo t : list) {
            String part = "tensor " + t.name();
            if (byName.put(t.name(), t) != null) {
                throw new ZseFormatException(path, part, "name appears twice in the index");
            }
            checkRegion(path, part + " data", t.dataOffset(), t.dataLength(), dataOffset, size);
            regions.add(new long[]{t.dataOffset(), t.dataLength()});
            if (t.scalesLength() > 0) {
                checkRegion(path, part + " scales", t.scalesOffset(), t.scalesLength(), dataOffset, size);
                regions.add(new long[]{t.scalesOffset(), t.scalesLength()});
            } else if (t.scalesOffset() != 0 || t.scalesCrc() != 0) {
                throw new ZseFormatException(path, part, "has a scales offset or checksum but no scales");
            }
        }
        regions.sort(Comparator.comparingLong(r -> r[0]));
        for (int i = 1; i < regions.size(); i++) {
            long[] prev = regions.get(i - 1);
            if (regions.get(i)[0] < prev[0] + prev[1]) {
                throw new ZseFormatException(path, "tensor-index", "tensor regions overlap at offset "
                        + regions.get(i)[0]);
            }
        }
        return Collections.unmodifiableMap(byName);
    }

    private static void checkRegion(Path path, String part, long offset, long length, long dataOffset, long size)
            throws ZseFormatException {
        if (offset < dataOffset || offset % ZseLayout.TENSOR_ALIGNMENT != 0 || length <= 0 || length > size - offset) {
            throw new ZseFormatException(path, part, "offset " + offset + " length " + length
                    + " is outside the data area [" + dataOffset + ", " + size + ") or not "
                    + ZseLayout.TENSOR_ALIGNMENT + "-byte aligned");
        }
    }

    private static final MemorySegment ZERO_BLOCK = MemorySegment.ofArray(new byte[1 << 16]);

    private static void checkZero(Path path, MemorySegment file, long from, long to, String part)
            throws ZseFormatException {
        for (long p = from; p < to; p += ZERO_BLOCK.byteSize()) {
            long n = Math.min(to - p, ZERO_BLOCK.byteSize());
            long mismatch = file.asSlice(p, n).mismatch(ZERO_BLOCK.asSlice(0, n));
            if (mismatch >= 0) {
                throw new ZseFormatException(path, part, "non-zero byte at offset " + (p + mismatch));
            }
        }
    }

    static int crc(MemorySegment segment) {
        CRC32C crc = new CRC32C();
        crc.update(segment.asByteBuffer());
        return (int) crc.getValue();
    }

    /** Bytes a full verification reads between two progress reports: small enough to cancel promptly. */
    public static final long VERIFY_CHUNK_BYTES = 1 << 20;

    /** Told how far a full verification has read; an exception it throws (CancellationException) stops it. */
    @FunctionalInterface
    public interface VerifyProgress {
        VerifyProgress NONE = bytesChecked -> { };

        /** @param bytesChecked bytes of the data area checked so far, of {@link ZseFile#dataLength()} */
        void checked(long bytesChecked);
    }

    /** Checks the checksum of every tensor and that all padding in the data area is zero. */
    public void verify() throws ZseFormatException {
        verify(VerifyProgress.NONE);
    }

    /**
     * {@link #verify()}, reading the data area once in file order (sequential reads suit network volumes), one chunk
     * at a time, and reporting after each chunk.
     *
     * @throws TensorChecksumException naming the first tensor whose data or scales do not match their checksum
     */
    public void verify(VerifyProgress progress) throws ZseFormatException {
        List<ChecksummedRegion> regions = new ArrayList<>();
        for (TensorInfo t : tensors.values()) {
            regions.add(new ChecksummedRegion(t.name(), "data", t.dataOffset(), t.dataLength(), t.dataCrc()));
            if (t.scalesLength() > 0) {
                regions.add(new ChecksummedRegion(t.name(), "scales", t.scalesOffset(), t.scalesLength(), t.scalesCrc()));
            }
        }
        regions.sort(Comparator.comparingLong(ChecksummedRegion::offset));
        long cursor = dataOffset;
        // Each chunk is copied out before its checksum: the JVM turns a fault in the copy (SIGBUS, the file having
        // shrunk since it was mapped) into an InternalError, while one inside CRC32C's intrinsic would end the process.
        try (Arena chunkArena = Arena.ofConfined()) {
            MemorySegment chunk = chunkArena.allocate(VERIFY_CHUNK_BYTES);
            for (ChecksummedRegion r : regions) {
                checkZero(path, mapping, cursor, r.offset(), "padding in the data area");
                CRC32C crc = new CRC32C();
                for (long p = r.offset(); p < r.end(); p += VERIFY_CHUNK_BYTES) {
                    long n = Math.min(VERIFY_CHUNK_BYTES, r.end() - p);
                    MemorySegment.copy(mapping, p, chunk, 0, n);
                    crc.update(chunk.asSlice(0, n).asByteBuffer());
                    progress.checked(p + n - dataOffset);
                }
                if ((int) crc.getValue() != r.crc()) {
                    throw new TensorChecksumException(path, r.tensor(), r.kind(), r.crc(), (int) crc.getValue());
                }
                cursor = r.end();
            }
        }
        checkZero(path, mapping, cursor, mapping.byteSize(), "padding in the data area");
        progress.checked(dataLength());
    }

    /** A tensor's data or scales: the byte range one index checksum covers. */
    private record ChecksummedRegion(String tensor, String kind, long offset, long length, int crc) {
        long end() {
            return offset + length;
        }
    }

    public Path path() {
        return path;
    }

    public String version() {
        return majorVersion + "." + minorVersion;
    }

    public long fileSize() {
        return mapping.byteSize();
    }

    public long dataOffset() {
        return dataOffset;
    }

    /** Bytes from the data offset to the end of the file: tensors and the padding between them. */
    public long dataLength() {
        return mapping.byteSize() - dataOffset;
    }

    /**
     * Why the file no longer backs all of its mapping, or empty: a file that shrank after it was mapped (truncated or
     * rewritten in place) faults every read past its new end. Asks the open file, so a file renamed over the path is
     * no change to this one.
     */
    public Optional<String> shrunk() {
        try {
            long now = channel.size();
            return now < mapping.byteSize() ? Optional.of(path + ": " + MappedFiles.shrunk(now, mapping.byteSize()))
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.of(path + ": the file cannot be read any more (" + e.getMessage() + ")");
        }
    }

    /** The whole mapping (for backends that upload the data area in large chunks). */
    public MemorySegment mapping() {
        return mapping;
    }

    public Optional<MemorySegment> section(SectionKind kind) {
        return Optional.ofNullable(sections.get(kind));
    }

    public Optional<byte[]> sectionBytes(SectionKind kind) {
        return section(kind).map(s -> s.toArray(ValueLayout.JAVA_BYTE));
    }

    public Optional<String> sectionText(SectionKind kind) {
        return sectionBytes(kind).map(b -> new String(b, StandardCharsets.UTF_8));
    }

    /** The normalised model configuration JSON (always present). */
    public String configJson() {
        return sectionText(SectionKind.CONFIG).orElseThrow();
    }

    /** Index entries in file order. */
    public List<TensorInfo> tensors() {
        return List.copyOf(tensors.values());
    }

    public boolean hasTensor(String name) {
        return tensors.containsKey(name);
    }

    public ZseTensor tensor(String name) {
        TensorInfo t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException(path + ": no tensor named " + name);
        }
        MemorySegment scales = t.scalesLength() == 0 ? MemorySegment.ofArray(new byte[0])
                : mapping.asSlice(t.scalesOffset(), t.scalesLength());
        return new ZseTensor(t, mapping.asSlice(t.dataOffset(), t.dataLength()), scales, channel);
    }

    @Override
    public void close() {
        PageCacheReadahead reading = readahead;
        if (reading != null) {
            reading.stop(); // before the mapping goes
        }
        try {
            channel.close();
        } catch (IOException e) {
            // a read-only file: nothing was written that closing could lose
        } finally {
            arena.close();
        }
    }
}
