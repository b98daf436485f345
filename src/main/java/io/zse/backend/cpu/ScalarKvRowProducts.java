package io.zse.backend.cpu;

import io.zse.backend.F16KvRows;
import io.zse.backend.F32KvRows;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvRows;

/** {@link KvRowProducts} one element at a time; also the element access the vector kernels finish their tails with. */
final class ScalarKvRowProducts implements KvRowProducts {
    static final ScalarKvRowProducts INSTANCE = new ScalarKvRowProducts();

    private ScalarKvRowProducts() {
    }

    @Override
    public float dot(KvRows rows, int position, int headOffset, float[] q, int qOffset, int headDim) {
        int base = position * rows.kvDim() + headOffset;
        float sum = 0;
        for (int i = 0; i < headDim; i++) {
            sum += element(rows, base + i) * q[qOffset + i];
        }
        return sum * rowScale(rows, position, headOffset, headDim);
    }

    @Override
    public void accumulate(KvRows rows, int position, int headOffset, float p, float[] out, int outOffset,
                           int headDim) {
        int base = position * rows.kvDim() + headOffset;
        float a = p * rowScale(rows, position, headOffset, headDim);
        for (int i = 0; i < headDim; i++) {
            out[outOffset + i] += a * element(rows, base + i);
        }
    }

    /** One stored element widened to F32 (INT8: the code, unscaled). */
    static float element(KvRows rows, int index) {
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
