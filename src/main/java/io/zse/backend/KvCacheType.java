package io.zse.backend;

import java.util.Locale;

/** How a {@link KvCache} stores keys and values: the memory per position against the attention's precision. */
public enum KvCacheType {
    /** 4 bytes per element, exact. */
    F32,
    /** IEEE binary16, 2 bytes per element; values beyond ±65504 overflow to infinity. */
    F16,
    /** int8 codes, 1 byte per element, plus one F32 scale per (position, kv head) row: symmetric, absmax / 127. */
    INT8;

    /** Parses {@code f32}, {@code f16} or {@code int8} (any case). */
    public static KvCacheType parse(String name) {
        for (KvCacheType type : values()) {
            if (type.name().equalsIgnoreCase(name.trim())) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown KV cache type '" + name + "' (use f32, f16 or int8)");
    }

    /** Bytes one position's row of keys (or of values) takes: the elements, plus the INT8 scales. */
    public long bytesPerRow(int numKvHeads, int headDim) {
        long elements = (long) numKvHeads * headDim;
        return switch (this) {
            case F32 -> elements * Float.BYTES;
            case F16 -> elements * Short.BYTES;
            case INT8 -> elements + (long) numKvHeads * Float.BYTES;
        };
    }

    /** The lower-case name the CLI takes and prints. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
