package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Scalar decoder for every {@link TensorType}, written to be obviously right: one element at a time, the scales read
 * and the 4-bit codes unpacked once per group. It is the reference that tests, {@code zse inspect --verify} and the Vector API kernels' tests
 * compare against, and the row decoder of the CPU backend's scalar kernels (for JVMs and native images without the
 * Vector API).
 */
public final class TensorDecoder {
    private TensorDecoder() {
    }

    /**
     * Decodes elements {@code [firstElement, firstElement + count)} of a tensor into {@code out[outOffset...]}.
     *
     * @param groupSize 0 for F32/F16/BF16, else a size {@link TensorType#allowsGroupSize allowed} for the type
     * @param data the whole tensor's element data
     * @param scales the whole tensor's scales (ignored for unquantized types)
     * @param firstElement multiple of groupSize for quantized types
     * @param count multiple of groupSize for quantized types
     */
    public static void decode(TensorType type, int groupSize, MemorySegment data, MemorySegment scales,
            long firstElement, int count, float[] out, int outOffset) {
        if (!type.allowsGroupSize(groupSize)) {
            throw new IllegalArgumentException("group size " + groupSize + " is not allowed for " + type);
        }
        if (type.isQuantized() && (firstElement % groupSize != 0 || count % groupSize != 0)) {
            throw new IllegalArgumentException("first element " + firstElement + " and count " + count
                    + " must be multiples of the group size " + groupSize);
        }
        switch (type) {
            case F32 -> MemorySegment.copy(data, LittleEndian.FLOAT, firstElement * 4, out, outOffset, count);
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    out[outOffset + i] = HalfFloats.fromF16(data.get(LittleEndian.SHORT, (firstElement + i) * 2));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    out[outOffset + i] = HalfFloats.fromBf16(data.get(LittleEndian.SHORT, (firstElement + i) * 2));
                }
            }
            case Q4_K, Q5_K, Q6_K -> {
                for (int i = 0; i < count; i += groupSize) {
                    KQuantBlocks.decode(type, data, scales, (firstElement + i) / groupSize, out, outOffset + i);
                }
            }
            case Q5 -> {
                for (int i = 0; i < count; i += 32) {
                    long group = (firstElement + i) / 32;
                    float d = scale(scales, 2 * group);
                    float m = scale(scales, 2 * group + 1);
                    for (int j = 0; j < 32; j++) {
                        out[outOffset + i + j] = Q5Groups.code(data, group, j) * d + m;
                    }
                }
            }
            case TERNARY -> {
                float s = TernaryBlocks.scale(scales);
                for (int i = 0; i < count; i++) {
                    out[outOffset + i] = (TernaryBlocks.code(data, firstElement + i) - 1) * s;
                }
            }
            case Q8, Q4, NF4 -> {
                byte[] codes = new byte[groupSize];
                for (int i = 0; i < count; i += groupSize) {
                    decodeGroup(type, groupSize, data, scales, (firstElement + i) / groupSize, codes, out, outOffset + i);
                }
            }
        }
    }

    /**
     * Decodes group {@code group} of a quantized tensor into out[outOffset .. outOffset + groupSize); {@code codes}
     * holds the group's unpacked 4-bit codes.
     */
    private static void decodeGroup(TensorType type, int groupSize, MemorySegment data, MemorySegment scales,
            long group, byte[] codes, float[] out, int outOffset) {
        long groupStart = group * groupSize;
        switch (type) {
            case Q8 -> {
                float d = scale(scales, group);
                for (int j = 0; j < groupSize; j++) {
                    out[outOffset + j] = data.get(ValueLayout.JAVA_BYTE, groupStart + j) * d;
                }
            }
            case Q4 -> {
                float d = scale(scales, 2 * group);
                float m = scale(scales, 2 * group + 1);
                Nibbles.unpackGroup(data, groupStart / 2, groupSize, codes);
                for (int j = 0; j < groupSize; j++) {
                    out[outOffset + j] = codes[j] * d + m;
                }
            }
            case NF4 -> {
                float absmax = scale(scales, group);
                Nibbles.unpackGroup(data, groupStart / 2, groupSize, codes);
                for (int j = 0; j < groupSize; j++) {
                    out[outOffset + j] = Nf4.value(codes[j]) * absmax;
                }
            }
            default -> throw new IllegalArgumentException(type + " has no groups");
        }
    }

    /** The i-th F16 value of the scales region. */
    private static float scale(MemorySegment scales, long i) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, i * 2));
    }
}
