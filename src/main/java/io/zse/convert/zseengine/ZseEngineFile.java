package io.zse.convert.zseengine;

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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.zip.CRC32;

/**
 * A {@code .zse} file written by the Python zse-engine 2.0.x (magic {@code ZSE\x01}; described byte for byte in
 * docs/zse-format.md, "Importing zse-engine files"), mapped read-only. Opening checks the header, the section table
 * (an unknown section type, or no TOKENIZER section where the header's flags declare one, is refused),
 * the CRC-32 of the config, tokenizer and weight-index sections, and decodes those three tagged-value sections with
 * every length checked against the bytes left; tensor blocks are checked to lie inside the weight data.
 *
 * <p>Tagged values decode to null, {@link Boolean}, {@link Long}, {@link Double}, {@link String}, {@code byte[]},
 * {@link List} or {@link Map} (insertion-ordered).
 */
public final class ZseEngineFile implements AutoCloseable {
    static final int CONFIG = 0;
    static final int TOKENIZER = 1;
    static final int WEIGHT_INDEX = 2;
    static final int WEIGHT_DATA = 3;
    /** Defined by the engine, never written; skipped. */
    static final int KERNELS = 4;
    private static final List<String> SECTION_NAMES = List.of("CONFIG", "TOKENIZER", "WEIGHT_INDEX", "WEIGHT_DATA",
            "KERNELS");
    /** Header flag bit 0: the file has a TOKENIZER section. */
    private static final int HAS_TOKENIZER = 1;
    private static final int MAX_SECTIONS = 16;
    private static final int MAX_DEPTH = 8;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** One weight-index entry; offsets absolute in the file. */
    public record Entry(String name, long[] shape, String dtype, int groupSize, long dataOffset, long dataBytes,
                        long scaleOffset, long scaleBytes, long zerosOffset, long zerosBytes) {
        public long elementCount() {
            long n = 1;
            for (long d : shape) {
                n = Math.multiplyExact(n, d);
            }
            return n;
        }
    }

    private final Path path;
    private final Arena arena;
    private final MemorySegment segment;
    private final Map<String, Object> config;
    private final Map<String, Object> tokenizer;
    private final List<Entry> entries;

    private ZseEngineFile(Path path, Arena arena, MemorySegment segment, Map<String, Object> config,
                          Map<String, Object> tokenizer, List<Entry> entries) {
        this.path = path;
        this.arena = arena;
        this.segment = segment;
        this.config = config;
        this.tokenizer = tokenizer;
        this.entries = entries;
    }

    public static ZseEngineFile open(Path path) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            MemorySegment segment = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
            return parse(path, arena, segment);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static ZseEngineFile parse(Path path, Arena arena, MemorySegment s) throws IOException {
        long size = s.byteSize();
        if (size < 64 || s.get(U32, 0) != 0x0145535A) {
            throw new ImportFormatException(path, "not a zse-engine file (magic is not \"ZSE\\x01\")");
        }
        int version = s.get(U32, 4);
        if (version != 1) {
            throw new ImportFormatException(path, "zse-engine format version " + Integer.toUnsignedString(version)
                    + " (supported: 1)");
        }
        long total = s.get(U64, 8);
        if (total != size) {
            throw new ImportFormatException(path, "header says the file has " + Long.toUnsignedString(total)
                    + " bytes but it has " + size + " (truncated or padded)");
        }
        int flags = s.get(U32, 16);
        int count = s.get(U32, 20);
        if (count < 0 || count > MAX_SECTIONS || 64 + 32L * count > size) {
            throw new ImportFormatException(path, "section count " + Integer.toUnsignedString(count) + " is impossible");
        }
        Map<Integer, long[]> sections = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            long at = 64 + 32L * i;
            int type = s.get(U32, at);
            if (type < CONFIG || type > KERNELS) {
                // the engine refuses these too; skipping one would hide a damaged table (a tokenizer dropped silently)
                String known = IntStream.range(0, SECTION_NAMES.size()).mapToObj(t -> t + " " + SECTION_NAMES.get(t))
                        .collect(Collectors.joining(", "));
                throw new ImportFormatException(path, "section table entry " + i + " at byte " + at + " has unknown "
                        + "type " + Integer.toUnsignedString(type) + " (known: " + known + ")");
            }
            long offset = s.get(U64, at + 4);
            long length = s.get(U64, at + 12);
            int crc = s.get(U32, at + 20);
            if (offset < 0 || length < 0 || offset > size || length > size - offset) {
                throw new ImportFormatException(path, "section " + type + " (" + length + " bytes at " + offset
                        + ") lies outside the file");
            }
            if (type != KERNELS && sections.put(type, new long[] {offset, length, crc}) != null) {
                throw new ImportFormatException(path, "section type " + type + " appears twice");
            }
        }
        for (int required : new int[] {CONFIG, WEIGHT_INDEX, WEIGHT_DATA}) {
            if (!sections.containsKey(required)) {
                throw new ImportFormatException(path, "has no section of type " + required + " ("
                        + SECTION_NAMES.get(required) + ")");
            }
        }
        if ((flags & HAS_TOKENIZER) != 0 && !sections.containsKey(TOKENIZER)) {
            throw new ImportFormatException(path, "has no section of type " + TOKENIZER + " ("
                    + SECTION_NAMES.get(TOKENIZER) + "), which its header flags 0x" + Integer.toHexString(flags)
                    + " declare (HAS_TOKENIZER)");
        }
        Map<String, Object> config = asMap(path, decodeSection(path, s, sections.get(CONFIG), "CONFIG"), "CONFIG");
        Map<String, Object> tokenizer = sections.containsKey(TOKENIZER)
                ? asMap(path, decodeSection(path, s, sections.get(TOKENIZER), "TOKENIZER"), "TOKENIZER") : null;
        Object index = decodeSection(path, s, sections.get(WEIGHT_INDEX), "WEIGHT_INDEX");
        if (!(index instanceof List<?> list)) {
            throw new ImportFormatException(path, "WEIGHT_INDEX is not a list");
        }
        long[] data = sections.get(WEIGHT_DATA);
        List<Entry> entries = new ArrayList<>();
        for (Object item : list) {
            entries.add(entry(path, asMap(path, item, "WEIGHT_INDEX entry"), data[0], data[1]));
        }
        checkDisjoint(path, entries);
        return new ZseEngineFile(path, arena, s, config, tokenizer, List.copyOf(entries));
    }

    /** One tensor's data, scales or zeros in the weight data. */
    private record Region(String what, long start, long bytes) {
    }

    /** No two tensors' bytes (data, scales, zeros) overlap: each tensor converts from bytes of its own. */
    private static void checkDisjoint(Path path, List<Entry> entries) throws ImportFormatException {
        List<Region> regions = new ArrayList<>();
        for (Entry e : entries) {
            regions.add(new Region("tensor '" + e.name() + "' data", e.dataOffset(), e.dataBytes()));
            regions.add(new Region("tensor '" + e.name() + "' scales", e.scaleOffset(), e.scaleBytes()));
            regions.add(new Region("tensor '" + e.name() + "' zeros", e.zerosOffset(), e.zerosBytes()));
        }
        regions.removeIf(r -> r.bytes() == 0);
        regions.sort(java.util.Comparator.comparingLong(Region::start));
        for (int i = 1; i < regions.size(); i++) {
            Region before = regions.get(i - 1);
            Region at = regions.get(i);
            if (at.start() < before.start() + before.bytes()) {
                throw new ImportFormatException(path, at.what() + " overlaps " + before.what());
            }
        }
    }

    private static Entry entry(Path path, Map<String, Object> m, long base, long dataLength) throws ImportFormatException {
        if (!(m.get("name") instanceof String name) || !(m.get("dtype") instanceof String dtype)
                || !(m.get("shape") instanceof List<?> shapeList)) {
            throw new ImportFormatException(path, "WEIGHT_INDEX entry " + m.get("name") + " lacks name, dtype or shape");
        }
        long[] shape = new long[shapeList.size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(shapeList.get(i) instanceof Long d) || d <= 0 || d > 1L << 40) {
                throw new ImportFormatException(path, "tensor '" + name + "' has dimension " + shapeList.get(i));
            }
            shape[i] = (Long) shapeList.get(i);
        }
        if (shape.length == 0 || shape.length > 4) {
            throw new ImportFormatException(path, "tensor '" + name + "' has rank " + shape.length);
        }
        long group = number(path, m, name, "group_size");
        if (group <= 0 || group > 1 << 20) {
            throw new ImportFormatException(path, "tensor '" + name + "' has group size " + group);
        }
        long[] blocks = new long[6];
        String[] keys = {"data_offset", "data_nbytes", "scale_offset", "scale_nbytes", "zeros_offset", "zeros_nbytes"};
        for (int i = 0; i < 6; i += 2) {
            blocks[i] = number(path, m, name, keys[i]);
            blocks[i + 1] = number(path, m, name, keys[i + 1]);
            if (blocks[i] > dataLength || blocks[i + 1] > dataLength - blocks[i]) {
                throw new ImportFormatException(path, "tensor '" + name + "' " + keys[i + 1] + " " + blocks[i + 1]
                        + " at " + keys[i] + " " + blocks[i] + " lies outside the weight data (" + dataLength + " bytes)");
            }
        }
        return new Entry(name, shape, dtype, (int) group, base + blocks[0], blocks[1], base + blocks[2], blocks[3],
                base + blocks[4], blocks[5]);
    }

    private static long number(Path path, Map<String, Object> m, String name, String key) throws ImportFormatException {
        if (!(m.get(key) instanceof Long v) || v < 0) {
            throw new ImportFormatException(path, "tensor '" + name + "' " + key + " is " + m.get(key));
        }
        return v;
    }

    private static Object decodeSection(Path path, MemorySegment s, long[] section, String name) throws IOException {
        MemorySegment bytes = s.asSlice(section[0], section[1]);
        CRC32 crc = new CRC32();
        crc.update(bytes.asByteBuffer());
        if ((int) crc.getValue() != (int) section[2]) {
            throw new ImportFormatException(path, name + " section checksum mismatch (stored 0x"
                    + Integer.toHexString((int) section[2]) + ", computed 0x" + Long.toHexString(crc.getValue()) + ")");
        }
        TaggedReader reader = new TaggedReader(path, bytes, name);
        Object value = reader.value(0);
        if (reader.position != bytes.byteSize()) {
            throw new ImportFormatException(path, name + " section has " + (bytes.byteSize() - reader.position)
                    + " bytes after its value");
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Path path, Object value, String what) throws ImportFormatException {
        if (!(value instanceof Map<?, ?> map)) {
            throw new ImportFormatException(path, what + " is not a map");
        }
        for (Object key : map.keySet()) {
            if (!(key instanceof String)) {
                throw new ImportFormatException(path, what + " has a key that is not a string: " + key);
            }
        }
        return (Map<String, Object>) map;
    }

    public Path path() {
        return path;
    }

    public Map<String, Object> config() {
        return config;
    }

    /** The tokenizer section, or null when the file has none. */
    public Map<String, Object> tokenizer() {
        return tokenizer;
    }

    public List<Entry> entries() {
        return entries;
    }

    public MemorySegment bytes(long offset, long length) {
        return segment.asSlice(offset, length);
    }

    @Override
    public void close() {
        arena.close();
    }

    /** The tagged-value encoding: a tag byte, then its payload; every count checked against the bytes left. */
    private static final class TaggedReader {
        private final Path path;
        private final MemorySegment s;
        private final String section;
        private long position;

        TaggedReader(Path path, MemorySegment s, String section) {
            this.path = path;
            this.s = s;
            this.section = section;
        }

        private void need(long n) throws ImportFormatException {
            if (n < 0 || n > s.byteSize() - position) {
                throw new ImportFormatException(path, section + " section is truncated at byte " + position
                        + " (needs " + n + " more)");
            }
        }

        private long count(long minBytesEach) throws ImportFormatException {
            need(4);
            long n = Integer.toUnsignedLong(s.get(U32, position));
            position += 4;
            if (n * minBytesEach > s.byteSize() - position) {
                throw new ImportFormatException(path, section + " section: a length of " + n + " at byte " + (position - 4)
                        + " cannot fit in the " + (s.byteSize() - position) + " bytes left");
            }
            return n;
        }

        Object value(int depth) throws ImportFormatException {
            if (depth > MAX_DEPTH) {
                throw new ImportFormatException(path, section + " section nests deeper than " + MAX_DEPTH);
            }
            need(1);
            int tag = s.get(ValueLayout.JAVA_BYTE, position++) & 0xFF;
            switch (tag) {
                case 0x00:
                    return null;
                case 0x01:
                    return Boolean.FALSE;
                case 0x02:
                    return Boolean.TRUE;
                case 0x10: {
                    need(8);
                    long v = s.get(U64, position);
                    position += 8;
                    return v;
                }
                case 0x11: {
                    need(8);
                    double v = Double.longBitsToDouble(s.get(U64, position));
                    position += 8;
                    return v;
                }
                case 0x20, 0x21: {
                    long n = count(1);
                    byte[] bytes = s.asSlice(position, n).toArray(ValueLayout.JAVA_BYTE);
                    position += n;
                    if (tag == 0x20) {
                        return bytes;
                    }
                    try {
                        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                                .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
                    } catch (CharacterCodingException e) {
                        throw new ImportFormatException(path, section + " section: a string is not valid UTF-8");
                    }
                }
                case 0x30: {
                    long n = count(1);
                    List<Object> list = new ArrayList<>((int) Math.min(n, 1 << 16));
                    for (long i = 0; i < n; i++) {
                        list.add(value(depth + 1));
                    }
                    return Collections.unmodifiableList(list);
                }
                case 0x40: {
                    long n = count(2);
                    Map<Object, Object> map = new LinkedHashMap<>();
                    for (long i = 0; i < n; i++) {
                        Object key = value(depth + 1);
                        map.put(key, value(depth + 1));
                    }
                    return Collections.unmodifiableMap(map);
                }
                default:
                    throw new ImportFormatException(path, section + " section: unknown tag 0x" + Integer.toHexString(tag)
                            + " at byte " + (position - 1));
            }
        }
    }
}
