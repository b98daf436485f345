package io.zse.backend.cpu;

import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * Every storage type in plain Java, for JVMs and native images where the Vector API kernels cannot run: a weight row is
 * decoded by the reference {@link TensorDecoder} from the mapped bytes into a scratch row of {@code cols} floats,
 * then dotted with the activations in place. Nothing larger than one row (one prefill tile) is ever decoded.
 */
final class ScalarMatmul extends CpuWeight {
    /** Each thread's scratch row (grow-only), which the reference decoder writes. */
    private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

    ScalarMatmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        return type == TensorType.TERNARY ? ternaryDot(row, x, xOffset)
                : dot(x, xOffset, MemorySegment.ofArray(decoded(row)), 0, cols);
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        MemorySegment.copy(decoded(row), 0, out, FLOAT, offset * Float.BYTES, cols);
    }

    /** Row {@code row} decoded into the first cols floats of this thread's scratch row. */
    private float[] decoded(int row) {
        float[] scratch = ROW.get();
        if (scratch.length < cols) {
            scratch = new float[cols];
            ROW.set(scratch);
        }
        TensorDecoder.decode(type, groupSize, data, scales, (long) row * cols, cols, scratch, 0);
        return scratch;
    }

    @Override
    void multiplyTile(MemorySegment tile, int tileRows, MemorySegment x, int n, MemorySegment out, int outStride,
                      int firstRow) {
        for (int r = 0; r < tileRows; r++) {
            for (int i = 0; i < n; i++) {
                out.setAtIndex(FLOAT, (long) i * outStride + firstRow + r,
                        dot(tile, (long) r * cols, x, (long) i * cols, cols));
            }
        }
    }

    /**
     * Σ a[aOffset + k] · b[bOffset + k] for k < length (F32 segments, offsets in floats), in four interleaved partial
     * sums: they hide the latency of the floating-point add, which a single running sum would wait on at every element.
     */
    static float dot(MemorySegment a, long aOffset, MemorySegment b, long bOffset, int length) {
        float s0 = 0;
        float s1 = 0;
        float s2 = 0;
        float s3 = 0;
        int k = 0;
        for (; k + 4 <= length; k += 4) {
            s0 += a.getAtIndex(FLOAT, aOffset + k) * b.getAtIndex(FLOAT, bOffset + k);
            s1 += a.getAtIndex(FLOAT, aOffset + k + 1) * b.getAtIndex(FLOAT, bOffset + k + 1);
            s2 += a.getAtIndex(FLOAT, aOffset + k + 2) * b.getAtIndex(FLOAT, bOffset + k + 2);
            s3 += a.getAtIndex(FLOAT, aOffset + k + 3) * b.getAtIndex(FLOAT, bOffset + k + 3);
        }
        for (; k < length; k++) {
            s0 += a.getAtIndex(FLOAT, aOffset + k) * b.getAtIndex(FLOAT, bOffset + k);
        }
        return (s0 + s1) + (s2 + s3);
    }
}
