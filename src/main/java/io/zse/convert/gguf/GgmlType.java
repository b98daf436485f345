package io.zse.convert.gguf;

/**
 * The tensor types a GGUF file can declare (ggml's {@code ggml_type} ids). Each stores blocks of {@link #blockSize}
 * elements in {@link #blockBytes} bytes along the innermost dimension; the types this converter cannot read are listed
 * by name so the error says which one a file uses.
 */
public enum GgmlType {
    F32(0, 1, 4),
    F16(1, 1, 2),
    Q4_0(2, 32, 18),
    Q4_1(3, 32, 20),
    Q5_0(6, 32, 22),
    Q5_1(7, 32, 24),
    Q8_0(8, 32, 34),
    Q8_1(9, 32, 36),
    Q2_K(10, 256, 84),
    Q3_K(11, 256, 110),
    Q4_K(12, 256, 144),
    Q5_K(13, 256, 176),
    Q6_K(14, 256, 210),
    Q8_K(15, 256, 292),
    IQ2_XXS(16, 256, 66),
    IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98),
    IQ1_S(19, 256, 50),
    IQ4_NL(20, 32, 18),
    IQ3_S(21, 256, 110),
    IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136),
    I8(24, 1, 1),
    I16(25, 1, 2),
    I32(26, 1, 4),
    I64(27, 1, 8),
    F64(28, 1, 8),
    IQ1_M(29, 256, 56),
    BF16(30, 1, 2),
    TQ1_0(34, 256, 54),
    TQ2_0(35, 256, 66);

    private final int id;
    private final int blockSize;
    private final int blockBytes;

    GgmlType(int id, int blockSize, int blockBytes) {
        this.id = id;
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
    }

    public int id() {
        return id;
    }

    /** Elements per block (1 for the plain float types). */
    public int blockSize() {
        return blockSize;
    }

    public int blockBytes() {
        return blockBytes;
    }

    /** The types {@link GgmlBlockDecoder} decodes. */
    public boolean isSupported() {
        return switch (this) {
            case F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0 -> true;
            default -> false;
        };
    }

    /** Bytes of {@code elements} elements; elements must be a whole number of blocks. */
    public long bytesFor(long elements) {
        return Math.multiplyExact(elements / blockSize, (long) blockBytes);
    }

    /**
     * What a type id this list does not hold is, where it is known, so the error can say it: 36 is bitnet.cpp's I2_S
     * (its fork of ggml; 2-bit codes with one F32 scale after the tensor's codes, in a packing its own quantizer and
     * kernels do not agree on and no specification fixes), which upstream ggml never assigned.
     */
    public static String unknownIdNote(long id) {
        return id == 36 ? " (bitnet.cpp's I2_S, whose packing is not documented: convert the model to TQ1_0 or TQ2_0)"
                : "";
    }

    /** The type with ggml id {@code id}, or null if ggml has none (or one newer than this list). */
    public static GgmlType byId(long id) {
        for (GgmlType t : values()) {
            if (t.id == id) {
                return t;
            }
        }
        return null;
    }
}
