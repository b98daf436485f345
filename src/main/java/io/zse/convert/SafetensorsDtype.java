package io.zse.convert;

import java.nio.file.Path;

/** Element types of safetensors tensors that zse reads and writes; the name is the header's "dtype" string. */
public enum SafetensorsDtype {
    F32(4),
    F16(2),
    BF16(2),
    /** Bytes: BitNet's packed ternary codes (read only where they are expected). */
    U8(1);

    private final int byteSize;

    SafetensorsDtype(int byteSize) {
        this.byteSize = byteSize;
    }

    public int byteSize() {
        return byteSize;
    }

    /** Maps a header dtype string; other safetensors types (F64, I8, U8, F8_E4M3, ...) are refused by name. */
    public static SafetensorsDtype fromHeader(String dtype, String tensor, Path file) throws SafetensorsException {
        for (SafetensorsDtype t : values()) {
            if (t.name().equals(dtype)) {
                return t;
            }
        }
        throw new SafetensorsException(file, "tensor '" + tensor + "' has unsupported dtype " + dtype
                + " (supported: F32, F16, BF16, and U8 for BitNet's packed weights)");
    }

    /** Parses a user-given name such as "bf16". */
    public static SafetensorsDtype parse(String name) {
        for (SafetensorsDtype t : values()) {
            if (t != U8 && t.name().equalsIgnoreCase(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown dtype '" + name + "' (expected f32, f16 or bf16)");
    }

    /** The torch_dtype name Hugging Face config files use. */
    public String torchName() {
        return switch (this) {
            case F32 -> "float32";
            case F16 -> "float16";
            case BF16 -> "bfloat16";
            case U8 -> "uint8";
        };
    }

}
