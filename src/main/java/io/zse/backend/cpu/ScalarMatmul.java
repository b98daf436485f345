package io.zse.backend.cpu;

import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;

/**
 * Every storage type in plain Java, for JVMs and native images where the Vector API kernels cannot run: a weight row is
 * decoded by the reference {@link TensorDecoder} from the mapped bytes into a scratch row of {@code cols} floats,
 * then dotted. Nothing larger than one row (one prefill tile) is ever decoded.
 */
final class ScalarMatmul extends CpuWeight {
    ScalarMatmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    public float dot(int row, float[] x, int xOffset) {
        return type == TensorType.TERNARY ? ternaryDot(row, x, xOffset) : dot(row, x, xOffset, new float[cols]);
    }

    /** One scratch row per worker, reused for every row it handles. */
    @Override
    protected void multiplyVector(float[] x, float[] out, CpuThreads threads) {
        threads.parallelFor(rows, cols, (start, end) -> {
            float[] scratch = new float[cols];
            for (int r = start; r < end; r++) {
                out[r] = dot(r, x, 0, scratch);
            }
        });
    }

    private float dot(int row, float[] x, int xOffset, float[] scratch) {
        decodeRow(row, scratch, 0);
        return dot(scratch, 0, x, xOffset, cols);
    }

    @Override
    public void decodeRow(int row, float[] out, int offset) {
        TensorDecoder.decode(type, groupSize, data, scales, (long) row * cols, cols, out, offset);
    }

    @Override
    void multiplyTile(float[] tile, int tileRows, float[] x, int n, float[] out, int outStride, int firstRow) {
        for (int r = 0; r < tileRows; r++) {
            for (int i = 0; i < n; i++) {
                out[i * outStride + firstRow + r] = dot(tile, r * cols, x, i * cols, cols);
            }
        }
    }

    /**
     * Σ a[aOffset + k] · b[bOffset + k] for k < length, in four interleaved partial sums: they hide the latency of the
     * floating-point add, which a single running sum would wait on at every element.
     */
    static float dot(float[] a, int aOffset, float[] b, int bOffset, int length) {
        float s0 = 0;
        float s1 = 0;
        float s2 = 0;
        float s3 = 0;
        int k = 0;
        for (; k + 4 <= length; k += 4) {
            s0 += a[aOffset + k] * b[bOffset + k];
            s1 += a[aOffset + k + 1] * b[bOffset + k + 1];
            s2 += a[aOffset + k + 2] * b[bOffset + k + 2];
            s3 += a[aOffset + k + 3] * b[bOffset + k + 3];
        }
        for (; k < length; k++) {
            s0 += a[aOffset + k] * b[bOffset + k];
        }
        return (s0 + s1) + (s2 + s3);
    }
}
