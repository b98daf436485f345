package io.zse.convert;

import io.zse.format.TensorType;
import java.lang.foreign.MemorySegment;

/**
 * A quantizer whose groups libzse_cpu encodes byte for byte as its Java reference does ({@link NativeQuantize}, given
 * the same scale table and codebook): {@link #quantize} takes the native path where it runs and falls back to
 * {@link #quantizeInJava}, which the subclass writes.
 */
abstract sealed class NativeFirstQuantizer implements Quantizer permits Q8Quantizer, Q4Quantizer, Nf4Quantizer {
    private final TensorType type;
    private final int groupSize;
    private final float[] scaleTable;
    private final float[] codebook;
    private final float maxHalfGap;

    /** {@code scaleTable}, {@code codebook} and {@code maxHalfGap}: what the native encoder takes for the type. */
    NativeFirstQuantizer(TensorType type, int groupSize, float[] scaleTable, float[] codebook, float maxHalfGap) {
        this.type = type;
        this.groupSize = groupSize;
        this.scaleTable = scaleTable;
        this.codebook = codebook;
        this.maxHalfGap = maxHalfGap;
    }

    @Override
    public final TensorType type() {
        return type;
    }

    @Override
    public final int groupSize() {
        return groupSize;
    }

    @Override
    public final void quantize(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        GroupInput.check(src, srcOffset, count, groupSize);
        if (!quantizeNatively(src, srcOffset, count, data, dataOffset, scales, scalesOffset)) {
            quantizeInJava(src, srcOffset, count, data, dataOffset, scales, scalesOffset);
        }
    }

    /** The native path alone: false where it cannot run or a scale overflows. */
    final boolean quantizeNatively(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
            MemorySegment scales, long scalesOffset) {
        return NativeQuantize.run(type, groupSize, src, srcOffset, count, data, dataOffset, scales, scalesOffset,
                scaleTable, codebook, maxHalfGap);
    }
}
