package io.zse.backend.cpu;

import io.zse.backend.F16KvRows;
import io.zse.backend.F32KvRows;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvRows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/** {@link KvRowProducts} one element at a time; the vector kernels finish their rows' tails with its loops. */
final class ScalarKvRowProducts implements KvRowProducts {
    static final ScalarKvRowProducts INSTANCE = new ScalarKvRowProducts();

    private ScalarKvRowProducts() {
    }

    @Override
    public float dot(KvRows rows, int slot, int headOffset, MemorySegment q, long qOffset, int headDim) {
        long base = (long) slot * rows.kvDim() + headOffset;
        return dotFrom(0, 0f, rows, base, q, qOffset, headDim) * rowScale(rows, slot, headOffset, headDim);
    }

    @Override
    public void accumulate(KvRows rows, int slot, int headOffset, float p, MemorySegment out, long outOffset,
                           int headDim) {
        long base = (long) slot * rows.kvDim() + headOffset;
        accumulateFrom(0, rows, base, p * rowScale(rows, slot, headOffset, headDim), out, outOffset, headDim);
    }

    /** sum + Σ stored[base + i] · q[qOffset + i] for from <= i < headDim, unscaled (the vector kernels' tail too). */
    static float dotFrom(int from, float sum, KvRows rows, long base, MemorySegment q, long qOffset, int headDim) {
        for (int i = from; i < headDim; i++) {
            sum += element(rows, base + i) * q.getAtIndex(FLOAT, qOffset + i);
        }
        return sum;
    }

    /** out[outOffset + i] += a · stored[base + i] for from <= i < headDim (the vector kernels' tail too). */
    static void accumulateFrom(int from, KvRows rows, long base, float a, MemorySegment out, long outOffset,
                               int headDim) {
        for (int i = from; i < headDim; i++) {
            out.setAtIndex(FLOAT, outOffset + i, out.getAtIndex(FLOAT, outOffset + i) + a * element(rows, base + i));
        }
    }

    /** One stored element widened to F32 (INT8: the code, unscaled). */
    private static float element(KvRows rows, long index) {
        return switch (rows) {
            case F32KvRows r -> r.data().getAtIndex(ValueLayout.JAVA_FLOAT, index);
            case F16KvRows r -> Float.float16ToFloat(r.data().getAtIndex(ValueLayout.JAVA_SHORT, index));
            case Int8KvRows r -> r.codes().get(ValueLayout.JAVA_BYTE, index);
        };
    }

    /** The factor every element of a head row shares: the INT8 scale, 1 for the float types. */
    static float rowScale(KvRows rows, int slot, int headOffset, int headDim) {
        return rows instanceof Int8KvRows r ? r.scale(slot, headOffset / headDim) : 1f;
    }
}
