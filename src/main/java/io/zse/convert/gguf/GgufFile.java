package io.zse.convert.gguf;

import io.zse.convert.ImportFormatException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file (llama.cpp's model format, versions 2 and 3), mapped read-only. Opening parses the header, every
 * metadata value and the tensor table, and checks each length against the bytes that are really there before
 * allocating anything for it: a truncated file or a lying count is a {@link ImportFormatException} naming what is wrong,
 * never an attempt to allocate what the header claims.
 *
 * <p>Metadata values are {@link Long} (every integer type; a u64 above 2^63 - 1 is refused), {@link Double} (f32 and
 * f64), {@link Boolean}, {@link String} or {@link GgufArray}.
 */
public final class GgufFile implements AutoCloseable {
    private static final int MAGIC = 0x46554747; // "GGUF" read little-endian
    private static final int MAX_DIMS = 4;
    private static final int MAX_ARRAY_DEPTH = 2;
    private static final int MAX_NAME_BYTES = 1024;
    /**
     * Far above any real array or file (vocabularies have a few hundred thousand entries, a file four such arrays);
     * bounds the boxed values, about 20 bytes each: one array's and the whole file's.
     */
    private static final long MAX_ARRAY_LENGTH = 1 << 24;
    private static final long DEFAULT_ALIGNMENT = 32;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** An array value: the GGUF element type code and the elements (boxed as for scalar values). */
    public record GgufArray(int elementType, List<Object> values) {
        public int size() {
            return values.size();
        }
    }

    /**
     * One tensor-table entry.
     *
     * @param dims   ggml order: dims[0] is the innermost (contiguous) dimension
     * @param offset absolute offset of the first byte in the file
     */
    public record GgufTensor(String name, GgmlType type, long[] dims, long offset, long byteSize) {
        public long elementCount() {
            long n = 1;
            for (long d : dims) {
                n *= d;
            }
            return n;
        }

        /** The shape in PyTorch order (outermost first), e.g. {@code [out_features, in_features]}. */
        public long[] shape() {
            long[] shape = new long[dims.length];
            for (int i = 0; i < dims.length; i++) {
                shape[i] = dims[dims.length - 1 - i];
            }
            return shape;
        }

        public long rowLength() {
            return dims[0];
        }
    }

    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final int version;
    private final Map<String, Object> metadata;
    private final List<GgufTensor> tensors;

    private GgufFile(Path path, Arena arena, MemorySegment segment, int version, Map<String, Object> metadata,
                     List<GgufTensor> tensors) {
        this.path = path;
        this.arena = arena;
        this.segment = segment;
        this.version = version;
        this.metadata = metadata;
        this.tensors = tensors;
    }

    public static GgufFile open(Path path) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
            GgufFile file = parse(path, arena, segment);
            return file;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static GgufFile parse(Path path, Arena arena, MemorySegment segment) throws ImportFormatException {
        Reader in = new Reader(path, segment);
        if (segment.byteSize() < 24) {
            throw new ImportFormatException(path, "too short for a GGUF header (" + segment.byteSize() + " bytes)");
        }
        if (in.u32() != MAGIC) {
            throw new ImportFormatException(path, "not a GGUF file (the first 4 bytes are not \"GGUF\")");
        }
        int version = in.u32();
        if (version != 2 && version != 3) {
            String why = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                    ? " (a big-endian GGUF; only little-endian files are supported)" : " (supported: 2 and 3)";
            throw new ImportFormatException(path, "GGUF version " + Integer.toUnsignedString(version) + why);
        }
        long tensorCount = in.count("tensor count", 8 + 4 + 8 + 4 + 8);
        long kvCount = in.count("metadata key count", 8 + 4);
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = in.string("metadata key " + i);
            int type = in.u32();
            Object value = in.value(type, "metadata key '" + key + "'", 0);
            if (metadata.put(key, value) != null) {
                throw new ImportFormatException(path, "metadata key '" + key + "' appears twice");
            }
        }
        long alignment = DEFAULT_ALIGNMENT;
        Object a = metadata.get("general.alignment");
        if (a != null) {
            if (!(a instanceof Long l) || l <= 0 || l > 1 << 20 || Long.bitCount(l) != 1) {
                throw new ImportFormatException(path, "general.alignment " + a + " is not a power of two");
            }
            alignment = l;
        }
        record Entry(String name, GgmlType type, long[] dims, long relativeOffset) {
        }
        List<Entry> entries = new ArrayList<>();
        Map<String, Boolean> names = new LinkedHashMap<>();
        for (long i = 0; i < tensorCount; i++) {
            String name = in.string("tensor " + i + " name");
            if (name.isEmpty() || name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
                throw new ImportFormatException(path, "tensor " + i + " has an empty or over-long name");
            }
            if (names.put(name, true) != null) {
                throw new ImportFormatException(path, "tensor '" + name + "' appears twice");
            }
            int rank = in.u32();
            if (rank < 1 || rank > MAX_DIMS) {
                throw new ImportFormatException(path, "tensor '" + name + "' has " + Integer.toUnsignedString(rank)
                        + " dimensions (1 to " + MAX_DIMS + " allowed)");
            }
            long[] dims = new long[rank];
            long elements = 1;
            for (int d = 0; d < rank; d++) {
                dims[d] = in.u64();
                if (dims[d] <= 0 || elements > segment.byteSize() * 8 / dims[d]) {
                    throw new ImportFormatException(path, "tensor '" + name + "' dimension " + d + " is "
                            + Long.toUnsignedString(dims[d]) + ", impossible for a file of " + segment.byteSize()
                            + " bytes");
                }
                elements *= dims[d];
            }
            int typeId = in.u32();
            GgmlType type = GgmlType.byId(Integer.toUnsignedLong(typeId));
            if (type == null) {
                throw new ImportFormatException(path, "tensor '" + name + "' has unknown tensor type id "
                        + Integer.toUnsignedString(typeId) + GgmlType.unknownIdNote(Integer.toUnsignedLong(typeId)));
            }
            if (dims[0] % type.blockSize() != 0) {
                throw new ImportFormatException(path, "tensor '" + name + "' rows of " + dims[0]
                        + " elements are not whole " + type + " blocks of " + type.blockSize());
            }
            long offset = in.u64();
            entries.add(new Entry(name, type, dims, offset));
        }
        long dataStart = (in.position() + alignment - 1) / alignment * alignment;
        List<GgufTensor> tensors = new ArrayList<>();
        for (Entry e : entries) {
            long elements = 1;
            for (long d : e.dims) {
                elements *= d;
            }
            long bytes = e.type.bytesFor(elements);
            if (e.relativeOffset < 0 || e.relativeOffset % alignment != 0) {
                throw new ImportFormatException(path, "tensor '" + e.name + "' offset "
                        + Long.toUnsignedString(e.relativeOffset) + " is not a multiple of the alignment " + alignment);
            }
            if (e.relativeOffset > segment.byteSize() - dataStart || bytes > segment.byteSize() - dataStart - e.relativeOffset) {
                throw new ImportFormatException(path, "tensor '" + e.name + "' (" + bytes + " bytes at data offset "
                        + e.relativeOffset + ") extends past the end of the file (truncated?)");
            }
            tensors.add(new GgufTensor(e.name, e.type, e.dims, dataStart + e.relativeOffset, bytes));
        }
        List<GgufTensor> byOffset = new ArrayList<>(tensors);
        byOffset.sort(Comparator.comparingLong(GgufTensor::offset));
        for (int i = 1; i < byOffset.size(); i++) {
            GgufTensor previous = byOffset.get(i - 1);
            if (previous.offset() + previous.byteSize() > byOffset.get(i).offset()) {
                throw new ImportFormatException(path, "tensors '" + previous.name() + "' and '" + byOffset.get(i).name()
                        + "' overlap");
            }
        }
        return new GgufFile(path, arena, segment, version, Collections.unmodifiableMap(metadata), List.copyOf(tensors));
    }

    public Path path() {
        return path;
    }

    public int version() {
        return version;
    }

    public Map<String, Object> metadata() {
        return metadata;
    }

    public List<GgufTensor> tensors() {
        return tensors;
    }

    /** The tensor's bytes, a slice of the mapping. */
    public MemorySegment bytes(GgufTensor tensor) {
        return segment.asSlice(tensor.offset(), tensor.byteSize());
    }

    @Override
    public void close() {
        arena.close();
    }

    /** Sequential bounds-checked reads over the mapping. */
    private static final class Reader {
        private final Path path;
        private final MemorySegment segment;
        private long position;
        private long arrayElements;  // the elements of the arrays read so far

        Reader(Path path, MemorySegment segment) {
            this.path = path;
            this.segment = segment;
        }

        long position() {
            return position;
        }

        private void need(long bytes, String what) throws ImportFormatException {
            if (bytes < 0 || bytes > segment.byteSize() - position) {
                throw new ImportFormatException(path, "truncated: " + what + " needs " + Long.toUnsignedString(bytes)
                        + " bytes at offset " + position + " but the file has " + (segment.byteSize() - position)
                        + " left");
            }
        }

        int u32() throws ImportFormatException {
            need(4, "a 32-bit value");
            int v = segment.get(U32, position);
            position += 4;
            return v;
        }

        long u64() throws ImportFormatException {
            need(8, "a 64-bit value");
            long v = segment.get(U64, position);
            position += 8;
            return v;
        }

        /** A count of items each taking at least {@code minBytes}: refused if the rest of the file cannot hold it. */
        long count(String what, long minBytes) throws ImportFormatException {
            long n = u64();
            if (n < 0 || n > (segment.byteSize() - position) / minBytes) {
                throw new ImportFormatException(path, what + " " + Long.toUnsignedString(n) + " cannot fit in the "
                        + (segment.byteSize() - position) + " bytes left at offset " + position);
            }
            return n;
        }

        String string(String what) throws ImportFormatException {
            long length = u64();
            if (length < 0 || length > segment.byteSize() - position) {
                throw new ImportFormatException(path, what + ": string length " + Long.toUnsignedString(length)
                        + " exceeds the " + (segment.byteSize() - position) + " bytes left at offset " + position);
            }
            byte[] bytes = segment.asSlice(position, length).toArray(ValueLayout.JAVA_BYTE);
            position += length;
            try {
                return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw new ImportFormatException(path, what + ": string is not valid UTF-8");
            }
        }

        Object value(int type, String what, int depth) throws ImportFormatException {
            return switch (type) {
                case 0 -> (long) byteValue(what) & 0xFF;
                case 1 -> (long) byteValue(what);
                case 2 -> (long) shortValue(what) & 0xFFFF;
                case 3 -> (long) shortValue(what);
                case 4 -> Integer.toUnsignedLong(u32());
                case 5 -> (long) u32();
                // An f32 widens through its shortest decimal (1e-6, not 9.99999997e-7): the value its writer meant.
                case 6 -> Double.parseDouble(Float.toString(Float.intBitsToFloat(u32())));
                case 7 -> {
                    int b = byteValue(what);
                    if (b != 0 && b != 1) {
                        throw new ImportFormatException(path, what + ": boolean byte " + b + " is neither 0 nor 1");
                    }
                    yield b == 1;
                }
                case 8 -> string(what);
                case 9 -> array(what, depth);
                case 10 -> {
                    long v = u64();
                    if (v < 0) {
                        throw new ImportFormatException(path, what + ": u64 value " + Long.toUnsignedString(v)
                                + " is too large");
                    }
                    yield v;
                }
                case 11 -> u64();
                case 12 -> Double.longBitsToDouble(u64());
                default -> throw new ImportFormatException(path, what + ": unknown value type "
                        + Integer.toUnsignedString(type));
            };
        }

        private GgufArray array(String what, int depth) throws ImportFormatException {
            if (depth >= MAX_ARRAY_DEPTH) {
                throw new ImportFormatException(path, what + ": arrays nested deeper than " + MAX_ARRAY_DEPTH);
            }
            int elementType = u32();
            long minBytes = switch (elementType) {
                case 0, 1, 7 -> 1;
                case 2, 3 -> 2;
                case 4, 5, 6 -> 4;
                case 8, 10, 11, 12 -> 8;
                case 9 -> 12;
                default -> throw new ImportFormatException(path, what + ": unknown array element type "
                        + Integer.toUnsignedString(elementType));
            };
            long n = count(what + " array length", minBytes);
            if (n > MAX_ARRAY_LENGTH - arrayElements) { // this array's limit and the file's: one budget
                throw new ImportFormatException(path, what + ": array length " + n + " exceeds the limit of "
                        + MAX_ARRAY_LENGTH + (arrayElements > 0 ? " for all arrays together, " + arrayElements
                        + " before it" : ""));
            }
            arrayElements += n;
            List<Object> values = new ArrayList<>((int) Math.min(n, 1 << 16));
            for (long i = 0; i < n; i++) {
                values.add(value(elementType, what, depth + 1));
            }
            return new GgufArray(elementType, Collections.unmodifiableList(values));
        }

        private byte byteValue(String what) throws ImportFormatException {
            need(1, what);
            return segment.get(ValueLayout.JAVA_BYTE, position++);
        }

        private short shortValue(String what) throws ImportFormatException {
            need(2, what);
            short v = segment.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), position);
            position += 2;
            return v;
        }
    }
}
