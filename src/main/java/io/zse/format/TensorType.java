package io.zse.format;

/**
 * Storage type of one tensor in a {@code .zse} file. The code is what the tensor index stores; the byte layouts are
 * specified in docs/zse-format.md ("Tensor types").
 */
public enum TensorType {
    /** IEEE binary32, stored as given. */
    F32(0, 0),
    /** IEEE binary16. */
    F16(1, 0),
    /** bfloat16 (top half of a binary32). */
    BF16(2, 0),
    /** Symmetric int8 in groups of 32; one F16 scale per group: w = q * d. */
    Q8(3, 32),
    /** Asymmetric 4-bit in groups of 32, 64 or 128; F16 (d, m) per group: w = q * d + m, q in 0..15. */
    Q4(4, 32),
    /** 4-bit NormalFloat code book in groups of 64; one F16 absmax per group: w = NF4[q] * absmax. */
    NF4(5, 64);

    private final int code;
    private final int defaultGroupSize;

    TensorType(int code, int defaultGroupSize) {
        this.code = code;
        this.defaultGroupSize = defaultGroupSize;
    }

    public int code() {
        return code;
    }

    /** 0 for the unquantized types. */
    public int defaultGroupSize() {
        return defaultGroupSize;
    }

    public boolean isQuantized() {
        return defaultGroupSize != 0;
    }

    /** Group sizes this type may be written with. */
    public boolean allowsGroupSize(int groupSize) {
        return switch (this) {
            case F32, F16, BF16 -> groupSize == 0;
            case Q8 -> groupSize == 32;
            case Q4 -> groupSize == 32 || groupSize == 64 || groupSize == 128;
            case NF4 -> groupSize == 64;
        };
    }

    /** Bytes of element data for {@code count} elements (packed nibbles for the 4-bit types). */
    public long dataBytes(long count) {
        return switch (this) {
            case F32 -> count * 4;
            case F16, BF16 -> count * 2;
            case Q8 -> count;
            case Q4, NF4 -> (count + 1) / 2;
        };
    }

    /** Bytes of scale data: F16 values, one per group (two for Q4: d then m). */
    public long scaleBytes(long count, int groupSize) {
        if (!isQuantized()) {
            return 0;
        }
        long groups = count / groupSize;
        return groups * 2 * (this == Q4 ? 2 : 1);
    }

    public static TensorType fromCode(int code) {
        for (TensorType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown tensor type code " + code);
    }

    public static TensorType parse(String name) {
        for (TensorType t : values()) {
            if (t.name().equalsIgnoreCase(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown tensor type '" + name + "' (expected f32, f16, bf16, q8, q4 or nf4)");
    }
}
