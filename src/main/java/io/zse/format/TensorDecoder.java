package io.zse.format;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reference decoder for every {@link TensorType}: scalar, one element at a time, written to be obviously right rather
 * than fast. Tests, {@code zse inspect --verify} and the fast kernels' tests compare against it.
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
        for (int i = 0; i < count; i++) {
            out[outOffset + i] = element(type, groupSize, data, scales, firstElement + i);
        }
    }

    /** Decodes one element, addressed by its index in the whole tensor. */
    public static float element(TensorType type, int groupSize, MemorySegment data, MemorySegment scales, long index) {
        return switch (type) {
            case F32 -> data.get(LittleEndian.FLOAT, index * 4);
            case F16 -> HalfFloats.fromF16(data.get(LittleEndian.SHORT, index * 2));
            case BF16 -> HalfFloats.fromBf16(data.get(LittleEndian.SHORT, index * 2));
            case Q8 -> {
                float d = scale(scales, index / groupSize);
                yield data.get(ValueLayout.JAVA_BYTE, index) * d;
            }
            case Q4 -> {
                long group = index / groupSize;
                float d = scale(scales, 2 * group);
                float m = scale(scales, 2 * group + 1);
                yield nibble(data, group, groupSize, index) * d + m;
            }
            case NF4 -> {
                long group = index / groupSize;
                float absmax = scale(scales, group);
                yield Nf4.value(nibble(data, group, groupSize, index)) * absmax;
            }
        };
    }

    /** The i-th F16 value of the scales region. */
    private static float scale(MemorySegment scales, long i) {
        return HalfFloats.fromF16(scales.get(LittleEndian.SHORT, i * 2));
    }

    private static int nibble(MemorySegment data, long group, int groupSize, long index) {
        return Nibbles.code(data, group * groupSize / 2, groupSize, (int) (index % groupSize));
    }
}
