package io.zse.convert;

import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;

/**
 * Encodes float weights into one quantized {@link TensorType}, a row at a time: groups of {@link #groupSize()}
 * consecutive elements, each with its own F16 scale(s). Byte layouts are those of docs/zse-format.md, which
 * {@link io.zse.format.TensorDecoder} decodes.
 */
public sealed interface Quantizer permits NativeFirstQuantizer, Q6KQuantizer {

    TensorType type();

    int groupSize();

    /**
     * Quantizes {@code src[srcOffset, srcOffset + count)}, writing {@code type().dataBytes(count)} bytes of element
     * data at {@code dataOffset} and {@code type().scaleBytes(count, groupSize())} bytes of scales at
     * {@code scalesOffset}.
     *
     * @param count a multiple of the group size
     * @throws IllegalArgumentException if count is not a multiple of the group size, a value is NaN or infinite, or a
     *     group's scale does not fit in an F16
     */
    void quantize(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset);

    /**
     * {@link #quantize} in Java only: the reference the native path (libzse_cpu, AVX-512) matches byte for byte, and
     * what runs where that path is unavailable.
     */
    void quantizeInJava(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset);

    /** The quantizer for {@code type} (Q8, Q4, NF4 or Q6_K) with the given group size. */
    static Quantizer of(TensorType type, int groupSize) {
        if (!type.isQuantized()) {
            throw new IllegalArgumentException(type + " is not a quantized type");
        }
        if (!type.allowsGroupSize(groupSize)) {
            throw new IllegalArgumentException("group size " + groupSize + " is not allowed for " + type);
        }
        return switch (type) {
            case Q8 -> new Q8Quantizer();
            case Q4 -> new Q4Quantizer(groupSize);
            case NF4 -> new Nf4Quantizer();
            case Q6_K -> new Q6KQuantizer();
            case Q4_K, Q5_K -> throw new IllegalArgumentException(type + " holds ggml's K-quant bits: it is "
                    + "written by importing a GGUF, not by quantizing");
            case Q5 -> throw new IllegalArgumentException("Q5 holds ggml's Q5_0/Q5_1 bits: it is written by importing a "
                    + "GGUF, not by quantizing");
            case F32, F16, BF16 -> throw new AssertionError(type);
            // One scale for the whole tensor: TernaryEncoder takes the tensor, not groups of it.
            case TERNARY -> throw new IllegalArgumentException("TERNARY weights come only from ternary checkpoints");
        };
    }
}
