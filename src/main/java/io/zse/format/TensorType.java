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
    NF4(5, 64),
    /**
     * ggml's Q5_0/Q5_1 codes in groups of 32: per group 16 bytes of nibbles (byte j: element j low, j + 16 high) and a
     * little-endian u32 of fifth bits (bit j: element j); F16 (d, m) per group: w = q * d + m, q in 0..31.
     */
    Q5(6, 32),
    /**
     * ggml's Q4_K bits in super-blocks of 256: 4-bit codes (data), F16 d and dmin with eight 6-bit (scale, min) pairs
     * (scales); w = d·scale·q - dmin·min per sub-block of 32.
     */
    Q4_K(10, 256),
    /** ggml's Q5_K: as Q4_K with a fifth code bit per element (data: 128 bytes of nibbles, then 32 of high bits). */
    Q5_K(11, 256),
    /** ggml's Q6_K bits in super-blocks of 256: 6-bit codes (data), F16 d and 16 int8 scales; w = d·scale·(q - 32). */
    Q6_K(12, 256),
    /**
     * Ternary (BitNet b1.58) in blocks of 128: 2-bit codes c (t = c - 1 in {-1, 0, 1}), one F32 scale s for the whole
     * tensor: w = t * s. Multiplied with activations quantized to int8 per row (absmax), as BitNet defines.
     */
    TERNARY(13, 128);

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
            case Q8, Q5 -> groupSize == 32;
            case Q4 -> groupSize == 32 || groupSize == 64 || groupSize == 128;
            case NF4 -> groupSize == 64;
            case Q4_K, Q5_K, Q6_K -> groupSize == 256;
            case TERNARY -> groupSize == 128;
        };
    }

    /** Bytes of element data for {@code count} elements (packed nibbles for the 4-bit types). */
    public long dataBytes(long count) {
        return switch (this) {
            case F32 -> count * 4;
            case F16, BF16 -> count * 2;
            case Q8 -> count;
            case Q4, NF4, Q4_K -> (count + 1) / 2;
            case Q5 -> count / 32 * 20;
            case Q5_K -> count / 256 * 160;
            case Q6_K -> count / 256 * 192;
            case TERNARY -> (count + 3) / 4;
        };
    }

    /** Whether this type holds one of ggml's K-quant super-block layouts (groups of 256 with sub-block scales). */
    public boolean isKQuant() {
        return this == Q4_K || this == Q5_K || this == Q6_K;
    }

    /**
     * Bytes of scale data: F16 values, one per group (two for Q4 and Q5: d then m); per K-quant super-block, 16 bytes
     * (Q4_K, Q5_K: d, dmin, 12 bytes of packed 6-bit pairs) or 18 (Q6_K: d, 16 int8 scales); one F32 per tensor for
     * TERNARY.
     */
    public long scaleBytes(long count, int groupSize) {
        if (!isQuantized()) {
            return 0;
        }
        if (this == TERNARY) {
            return 4;
        }
        long groups = count / groupSize;
        return switch (this) {
            case Q4, Q5 -> groups * 4;
            case Q4_K, Q5_K -> groups * 16;
            case Q6_K -> groups * 18;
            default -> groups * 2;
        };
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
        throw new IllegalArgumentException("unknown tensor type '" + name
                + "' (expected f32, f16, bf16, q8, q4, nf4, q4_k, q5_k, q6_k or ternary)");
    }
}
