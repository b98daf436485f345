package io.zse.convert.gguf;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GGUF v3 file written for a test, laid out as llama.cpp's writer lays it out: header, metadata, tensor infos, zeros
 * up to general.alignment (32 unless set), then each tensor's data at an aligned offset. Tests build files that no
 * real writer would, to reach refusals a byte patch of a real file cannot.
 *
 * <p>Metadata values by Java type: String, Integer (uint32), Long (int64), Float (float32), Double (float64),
 * Boolean, {@link GgufFile.GgufArray} (of its element type) and byte[] (a uint8 array, for arrays too long to box).
 */
final class GgufFixture {
    private static final int VERSION = 3;
    private static final long DEFAULT_ALIGNMENT = 32;

    /** One tensor-table entry and its bytes; dims in ggml order (innermost first). */
    private record Tensor(String name, GgmlType type, long[] dims, byte[] data) {
    }

    private final Map<String, Object> metadata = new LinkedHashMap<>();
    private final List<Tensor> tensors = new ArrayList<>();

    /**
     * The metadata and tensors of {@code file}, in its order. Its integers come back as int64 and its floats as
     * float64 ({@link GgufFile} keeps no scalar type, and its readers take any width), arrays as they were.
     */
    static GgufFixture copyOf(GgufFile file) {
        GgufFixture copy = new GgufFixture();
        copy.metadata.putAll(file.metadata());
        for (GgufFile.GgufTensor t : file.tensors()) {
            copy.tensor(t.name(), t.type(), t.dims(), file.bytes(t).toArray(ValueLayout.JAVA_BYTE));
        }
        return copy;
    }

    GgufFixture put(String key, Object value) {
        metadata.put(key, value);
        return this;
    }

    /** Adds a tensor after those already added; {@code dims} in ggml order. */
    GgufFixture tensor(String name, GgmlType type, long[] dims, byte[] data) {
        tensors.add(new Tensor(name, type, dims.clone(), data));
        return this;
    }

    byte[] bytes() {
        Out out = new Out();
        out.u32(0x46554747); // "GGUF" little-endian
        out.u32(VERSION);
        out.u64(tensors.size());
        out.u64(metadata.size());
        metadata.forEach((key, value) -> {
            out.string(key);
            int type = typeOf(value);
            out.u32(type);
            out.value(type, value);
        });
        long alignment = metadata.get("general.alignment") instanceof Number n ? n.longValue() : DEFAULT_ALIGNMENT;
        long offset = 0;
        for (Tensor t : tensors) {
            out.string(t.name);
            out.u32(t.dims.length);
            for (long d : t.dims) {
                out.u64(d);
            }
            out.u32(t.type.id());
            out.u64(offset);
            offset = alignUp(offset + t.data.length, alignment);
        }
        out.padTo(alignment);
        for (Tensor t : tensors) {
            out.bytes.writeBytes(t.data);
            out.padTo(alignment);
        }
        return out.bytes.toByteArray();
    }

    private static long alignUp(long n, long alignment) {
        return (n + alignment - 1) / alignment * alignment;
    }

    /** GGUF's value type code for a scalar or array value. */
    private static int typeOf(Object value) {
        return switch (value) {
            case Integer i -> 4;
            case Float f -> 6;
            case Boolean b -> 7;
            case String s -> 8;
            case GgufFile.GgufArray a -> 9;
            case byte[] b -> 9;
            case Long l -> 11;
            case Double d -> 12;
            default -> throw new IllegalArgumentException("no GGUF type for " + value.getClass());
        };
    }

    /** Little-endian writes into a growing buffer. */
    private static final class Out {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        void u32(long v) {
            bytes.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) v).array());
        }

        void u64(long v) {
            bytes.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array());
        }

        void string(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            u64(utf8.length);
            bytes.writeBytes(utf8);
        }

        void padTo(long alignment) {
            while (bytes.size() % alignment != 0) {
                bytes.write(0);
            }
        }

        /** {@code value} as GGUF type {@code type}: numbers narrow to the type's width, as the reader widens them. */
        void value(int type, Object value) {
            switch (type) {
                case 0, 1 -> bytes.write(((Number) value).intValue());
                case 2, 3 -> bytes.writeBytes(ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN)
                        .putShort(((Number) value).shortValue()).array());
                case 4, 5 -> u32(((Number) value).longValue());
                case 6 -> u32(Float.floatToIntBits(((Number) value).floatValue()));
                case 7 -> bytes.write((Boolean) value ? 1 : 0);
                case 8 -> string((String) value);
                case 9 -> array(value);
                case 10, 11 -> u64(((Number) value).longValue());
                case 12 -> u64(Double.doubleToLongBits(((Number) value).doubleValue()));
                default -> throw new IllegalArgumentException("unknown GGUF type " + type);
            }
        }

        private void array(Object value) {
            if (value instanceof byte[] uint8) {
                u32(0);
                u64(uint8.length);
                bytes.writeBytes(uint8);
                return;
            }
            GgufFile.GgufArray array = (GgufFile.GgufArray) value;
            u32(array.elementType());
            u64(array.size());
            array.values().forEach(element -> value(array.elementType(), element));
        }
    }
}
