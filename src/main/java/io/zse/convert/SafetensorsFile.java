package io.zse.convert;

import io.zse.format.HalfFloats;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One memory-mapped {@code .safetensors} file. The whole header is validated when the file is opened, so later reads
 * only need to check the caller's element range. Element data is read straight from the mapping; nothing is copied
 * to the heap unless the caller asks for it.
 */
public final class SafetensorsFile implements AutoCloseable {
    /** Same cap as the reference implementation: a header larger than this is certainly corrupt. */
    static final long MAX_HEADER_BYTES = 100_000_000L;
    static final String METADATA_KEY = "__metadata__";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Half-precision values are widened through a scratch array of this many elements per step. */
    private static final int CONVERT_CHUNK = 8192;

    private record Entry(SafetensorsTensor info, long dataOffset) {
    }

    private final Path path;
    private final Arena arena;
    private final boolean ownsArena;
    private final MemorySegment file;
    private final Map<String, Entry> entries;
    private final Map<String, String> metadata;

    private SafetensorsFile(Path path, Arena arena, boolean ownsArena, MemorySegment file,
                            Map<String, Entry> entries, Map<String, String> metadata) {
        this.path = path;
        this.arena = arena;
        this.ownsArena = ownsArena;
        this.file = file;
        this.entries = entries;
        this.metadata = metadata;
    }

    /** Maps the file into a shared arena that {@link #close()} releases. */
    public static SafetensorsFile open(Path path) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            return open(path, arena, true);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Maps the file into the caller's arena; {@link #close()} then leaves the arena open. */
    public static SafetensorsFile open(Path path, Arena arena) throws IOException {
        return open(path, arena, false);
    }

    private static SafetensorsFile open(Path path, Arena arena, boolean ownsArena) throws IOException {
        MemorySegment mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
        } catch (NoSuchFileException e) {
            throw new SafetensorsException(path, "no such file");
        }
        long fileSize = mapped.byteSize();
        if (fileSize < 8) {
            throw new SafetensorsException(path, "file is " + fileSize + " bytes, too short for a safetensors header");
        }
        long headerLength = mapped.get(U64_LE, 0);
        if (headerLength < 2 || headerLength > MAX_HEADER_BYTES || headerLength > fileSize - 8) {
            throw new SafetensorsException(path, "header length " + Long.toUnsignedString(headerLength)
                    + " does not fit the file size " + fileSize);
        }
        byte[] headerBytes = mapped.asSlice(8, headerLength).toArray(ValueLayout.JAVA_BYTE);
        long dataStart = 8 + headerLength;
        JsonNode header = parseHeader(path, headerBytes);
        Map<String, String> metadata = parseMetadata(path, header.get(METADATA_KEY));
        Map<String, Entry> entries = parseEntries(path, header, dataStart, fileSize - dataStart);
        return new SafetensorsFile(path, arena, ownsArena, mapped, entries, metadata);
    }

    private static JsonNode parseHeader(Path path, byte[] headerBytes) throws SafetensorsException {
        JsonNode header;
        try {
            // a decoder that reports, so that invalid UTF-8 is refused rather than read as U+FFFD
            header = JSON.readTree(StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(headerBytes)).toString());
        } catch (CharacterCodingException e) {
            throw new SafetensorsException(path, "header is not valid UTF-8", e);
        } catch (JsonProcessingException e) {
            throw new SafetensorsException(path, "header is not valid JSON: " + e.getOriginalMessage());
        }
        if (header == null || !header.isObject()) {
            throw new SafetensorsException(path, "header is not a JSON object");
        }
        return header;
    }

    private static Map<String, String> parseMetadata(Path path, JsonNode node) throws SafetensorsException {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new SafetensorsException(path, METADATA_KEY + " is not a JSON object");
        }
        Map<String, String> metadata = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isTextual()) {
                throw new SafetensorsException(path, METADATA_KEY + " value of '" + e.getKey() + "' is not a string");
            }
            metadata.put(e.getKey(), e.getValue().textValue());
        }
        return Collections.unmodifiableMap(metadata);
    }

    private static Map<String, Entry> parseEntries(Path path, JsonNode header, long dataStart, long dataSize)
            throws SafetensorsException {
        Map<String, Entry> entries = new LinkedHashMap<>();
        List<long[]> ranges = new ArrayList<>(); // {begin, end, index into names}
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : header.properties()) {
            String name = e.getKey();
            if (name.equals(METADATA_KEY)) {
                continue;
            }
            JsonNode node = e.getValue();
            if (!node.isObject()) {
                throw new SafetensorsException(path, "tensor '" + name + "': entry is not a JSON object");
            }
            JsonNode dtype = node.get("dtype");
            if (dtype == null || !dtype.isTextual()) {
                throw new SafetensorsException(path, "tensor '" + name + "': missing or non-string dtype");
            }
            SafetensorsDtype type = SafetensorsDtype.fromHeader(dtype.textValue(), name, path);
            long[] shape = longArray(path, name, node.get("shape"), "shape", -1);
            long[] offsets = longArray(path, name, node.get("data_offsets"), "data_offsets", 2);
            SafetensorsTensor info;
            long expectedBytes;
            try {
                info = new SafetensorsTensor(name, type, shape);
                expectedBytes = info.byteSize();
            } catch (ArithmeticException | IllegalArgumentException ex) {
                throw new SafetensorsException(path, "tensor '" + name + "': invalid shape " + node.get("shape"));
            }
            long begin = offsets[0];
            long end = offsets[1];
            if (begin > end || end > dataSize) {
                throw new SafetensorsException(path, "tensor '" + name + "': data_offsets [" + begin + ", " + end
                        + "] lie outside the data area of " + dataSize + " bytes");
            }
            if (end - begin != expectedBytes) {
                throw new SafetensorsException(path, "tensor '" + name + "': data_offsets cover " + (end - begin)
                        + " bytes but " + type + " shape " + node.get("shape") + " needs " + expectedBytes);
            }
            entries.put(name, new Entry(info, dataStart + begin));
            ranges.add(new long[]{begin, end, names.size()});
            names.add(name);
        }
        ranges.sort(Comparator.<long[]>comparingLong(r -> r[0]).thenComparingLong(r -> r[1]));
        for (int i = 1; i < ranges.size(); i++) {
            long[] previous = ranges.get(i - 1);
            long[] current = ranges.get(i);
            if (current[0] < previous[1]) {
                throw new SafetensorsException(path, "tensors '" + names.get((int) previous[2]) + "' and '"
                        + names.get((int) current[2]) + "' overlap");
            }
        }
        return Collections.unmodifiableMap(entries);
    }

    /** A JSON array of non-negative integers; {@code length} -1 accepts any length. */
    private static long[] longArray(Path path, String tensor, JsonNode node, String field, int length)
            throws SafetensorsException {
        if (node == null || !node.isArray() || (length >= 0 && node.size() != length)) {
            throw new SafetensorsException(path, "tensor '" + tensor + "': " + field + " must be an array"
                    + (length >= 0 ? " of " + length + " integers" : " of integers"));
        }
        long[] values = new long[node.size()];
        Iterator<JsonNode> it = node.elements();
        for (int i = 0; it.hasNext(); i++) {
            JsonNode v = it.next();
            if (!v.canConvertToExactIntegral() || !v.canConvertToLong() || v.asLong() < 0) {
                throw new SafetensorsException(path, "tensor '" + tensor + "': " + field
                        + " holds " + v + ", not a non-negative integer");
            }
            values[i] = v.asLong();
        }
        return values;
    }

    public Path path() {
        return path;
    }

    /** Tensors in header order. */
    public List<SafetensorsTensor> tensors() {
        return entries.values().stream().map(Entry::info).toList();
    }

    public Optional<SafetensorsTensor> tensor(String name) {
        return Optional.ofNullable(entries.get(name)).map(Entry::info);
    }

    /** The header's {@code __metadata__} string map (empty when absent). */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** The tensor's raw little-endian bytes, a view of the mapping valid until {@link #close()}. */
    public MemorySegment tensorBytes(String name) throws SafetensorsException {
        Entry e = entry(name);
        return file.asSlice(e.dataOffset, e.info.byteSize());
    }

    /**
     * Drops a tensor's pages from this process's resident memory once it has been read (they stay in the page cache),
     * so streaming through a large checkpoint does not grow the resident set by the checkpoint's size.
     */
    public void release(String name) throws SafetensorsException {
        MemorySegment bytes = tensorBytes(name);
        if (bytes.byteSize() > 0 && bytes.isMapped()) {
            bytes.unload();
        }
    }

    /**
     * {@link #release(String)} for elements {@code [firstElement, firstElement + count)} only (the pages they
     * touch), so a converter that reads a large tensor in chunks keeps only the chunks in flight resident.
     */
    public void release(String name, long firstElement, long count) throws SafetensorsException {
        MemorySegment bytes = tensorBytes(name);
        long width = entry(name).info.dtype().byteSize();
        if (count > 0 && bytes.isMapped()) {
            bytes.asSlice(firstElement * width, count * width).unload();
        }
    }

    /**
     * Copies elements {@code [firstElement, firstElement + count)} of a tensor (flattened, row-major) into
     * {@code out[outOffset..]}, widening F16 and BF16 to float.
     */
    public void readFloats(String name, long firstElement, int count, float[] out, int outOffset)
            throws SafetensorsException {
        Entry e = entry(name);
        long elements = e.info.elementCount();
        if (firstElement < 0 || count < 0 || firstElement > elements - count) {
            throw new IndexOutOfBoundsException("tensor '" + name + "' has " + elements + " elements; cannot read "
                    + count + " from element " + firstElement);
        }
        java.util.Objects.checkFromIndexSize(outOffset, count, out.length);
        SafetensorsDtype dtype = e.info.dtype();
        long byteOffset = e.dataOffset + firstElement * dtype.byteSize();
        if (dtype == SafetensorsDtype.F32) {
            MemorySegment.copy(file, F32_LE, byteOffset, out, outOffset, count);
            return;
        }
        if (dtype == SafetensorsDtype.U8) {
            for (int i = 0; i < count; i++) {
                out[outOffset + i] = file.get(java.lang.foreign.ValueLayout.JAVA_BYTE, byteOffset + i) & 0xff;
            }
            return;
        }
        short[] halves = new short[Math.min(count, CONVERT_CHUNK)];
        for (int done = 0; done < count; ) {
            int n = Math.min(halves.length, count - done);
            MemorySegment.copy(file, U16_LE, byteOffset + 2L * done, halves, 0, n);
            if (dtype == SafetensorsDtype.F16) {
                for (int i = 0; i < n; i++) {
                    out[outOffset + done + i] = Float.float16ToFloat(halves[i]);
                }
            } else {
                for (int i = 0; i < n; i++) {
                    out[outOffset + done + i] = HalfFloats.fromBf16(halves[i]);
                }
            }
            done += n;
        }
    }

    private Entry entry(String name) throws SafetensorsException {
        Entry e = entries.get(name);
        if (e == null) {
            throw new SafetensorsException(path, "no tensor named '" + name + "'");
        }
        return e;
    }

    /** Unmaps the file if this object owns its arena. */
    @Override
    public void close() {
        if (ownsArena) {
            arena.close();
        }
    }

    /** True if the path names a regular file whose name ends in .safetensors. */
    static boolean isSafetensors(Path p) {
        return Files.isRegularFile(p) && p.getFileName().toString().endsWith(".safetensors");
    }
}
