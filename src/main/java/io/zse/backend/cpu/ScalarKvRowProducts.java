package io.zse.backend.cpu;

import io.zse.backend.F16KvRows;
import io.zse.backend.F32KvRows;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvRows;

/** {@link KvRowProducts} one element at a time; the vector kernels finish their rows' tails with its loops. */
final class ScalarKvRowProducts implements KvRowProducts {
    static final ScalarKvRowProducts INSTANCE = new ScalarKvRowProducts();

    private ScalarKvRowProducts() {
    }

    @Override
    public float dot(KvRows rows, int position, int headOffset, float[] q, int qOffset, int headDim) {
        int base = position * rows.kvDim() + headOffset;
        return dotFrom(0, 0f, rows, base, q, qOffset, headDim) * rowScale(rows, position, headOffset, headDim);
    }

    @Override
    public void accumulate(KvRows rows, int position, int headOffset, float p, float[] out, int outOffset,
                           int headDim) {
        int base = position * rows.kvDim() + headOffset;
        accumulateFrom(0, rows, base, p * rowScale(rows, position, headOffset, headDim), out, outOffset, headDim);
    }

    /** sum + Σ stored[base + i] · q[qOffset + i] for from <= i < headDim, unscaled (the vector kernels' tail too). */
    static float dotFrom(int from, float sum, KvRows rows, int base, float[] q, int qOffset, int headDim) {
        for (int i = from; i < headDim; i++) {
            sum += element(rows, base + i) * q[qOffset + i];
        }
        return sum;
    }

    /** out[outOffset + i] += a · stored[base + i] for from <= i < headDim (the vector kernels' tail too). */
    static void accumulateFrom(int from, KvRows rows, int base, float a, float[] out, int outOffset, int headDim) {
        for (int i = from; i < headDim; i++) {
            out[outOffset + i] += a * element(rows, base + i);
        }
    }

    /** One stored element widened to F32 (INT8: the code, unscaled). */
    private static float element(KvRows rows, int index) {
        return switch (rows) {
            case F32KvRows r -> r.data()[index];
            case F16KvRows r -> Float.float16ToFloat(r.data()[index]);
            case Int8KvRows r -> r.codes()[index];
        };
    }

    /** The factor every element of a head row shares: the INT8 scale, 1 for the float types. */
    static float rowScale(KvRows rows, int position, int headOffset, int headDim) {
        return rows instanceof Int8KvRows r ? r.scales()[position * r.numKvHeads() + headOffset / headDim] : 1f;
    }
}
