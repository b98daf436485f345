package io.zse.convert;

import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Test helper: quantize with some encoder, then decode with the reference decoder. */
final class RoundTrip {

    /** The quantize signature, so that the test-only baseline can stand in for a {@link Quantizer}. */
    @FunctionalInterface
    interface Encoder {
        void quantize(float[] src, int srcOffset, int count, MemorySegment data, long dataOffset,
                MemorySegment scales, long scalesOffset);
    }

    /** Bytes written by an encoder. */
    record Encoded(MemorySegment data, MemorySegment scales) {
    }

    private RoundTrip() {
    }

    static Encoded encode(TensorType type, int groupSize, Encoder encoder, float[] src) {
        MemorySegment data = Arena.ofAuto().allocate(type.dataBytes(src.length));
        MemorySegment scales = Arena.ofAuto().allocate(Math.max(1, type.scaleBytes(src.length, groupSize)));
        encoder.quantize(src, 0, src.length, data, 0, scales, 0);
        return new Encoded(data, scales);
    }

    static float[] decode(TensorType type, int groupSize, Encoded encoded, int count) {
        float[] out = new float[count];
        TensorDecoder.decode(type, groupSize, encoded.data(), encoded.scales(), 0, count, out, 0);
        return out;
    }

    static float[] run(Quantizer quantizer, float[] src) {
        return run(quantizer.type(), quantizer.groupSize(), quantizer::quantize, src);
    }

    static float[] run(TensorType type, int groupSize, Encoder encoder, float[] src) {
        return decode(type, groupSize, encode(type, groupSize, encoder, src), src.length);
    }

    static double squaredError(float[] src, float[] decoded) {
        double sum = 0;
        for (int i = 0; i < src.length; i++) {
            double e = (double) src[i] - decoded[i];
            sum += e * e;
        }
        return sum;
    }
}
