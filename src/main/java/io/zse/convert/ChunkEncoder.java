package io.zse.convert;

import io.zse.format.HalfFloats;
import io.zse.format.LittleEndian;
import io.zse.format.TensorType;

import java.lang.foreign.MemorySegment;
import java.util.stream.IntStream;

/** Encodes rows of F32 values into a tensor type's data and scale bytes (quantizing rows in parallel). */
public final class ChunkEncoder {
    private final TensorType type;
    private final int groupSize;
    private final Quantizer quantizer;

    public ChunkEncoder(TensorType type, int groupSize) {
        this.type = type;
        this.groupSize = groupSize;
        this.quantizer = type.isQuantized() ? Quantizer.of(type, groupSize) : null;
    }

    /**
     * Encodes {@code rows} rows of {@code rowLength} values from {@code src} into the two segments (from offset 0),
     * quantizing rows in parallel on the common pool.
     */
    public void encode(float[] src, int rows, int rowLength, MemorySegment data, MemorySegment scales) {
        encode(src, rows, rowLength, data, scales, true);
    }

    /** {@link #encode} on the calling thread only (for callers that run chunks in parallel themselves). */
    public void encodeHere(float[] src, int rows, int rowLength, MemorySegment data, MemorySegment scales) {
        encode(src, rows, rowLength, data, scales, false);
    }

    private void encode(float[] src, int rows, int rowLength, MemorySegment data, MemorySegment scales,
                        boolean parallel) {
        int count = rows * rowLength;
        switch (type) {
            case F32 -> MemorySegment.copy(src, 0, data, LittleEndian.FLOAT, 0, count);
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    data.set(LittleEndian.SHORT, 2L * i, Float.floatToFloat16(src[i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < count; i++) {
                    data.set(LittleEndian.SHORT, 2L * i, HalfFloats.toBf16(src[i]));
                }
            }
            default -> {
                long rowData = type.dataBytes(rowLength);
                long rowScales = type.scaleBytes(rowLength, groupSize);
                if (!parallel) {
                    // whole chunk in one call: the quantizers work group by group, so rows need no separate calls
                    quantizer.quantize(src, 0, count, data, 0, scales, 0);
                    return;
                }
                IntStream.range(0, rows).parallel().forEach(r -> quantizer.quantize(src, r * rowLength, rowLength,
                        data, r * rowData, scales, r * rowScales));
            }
        }
    }
}
