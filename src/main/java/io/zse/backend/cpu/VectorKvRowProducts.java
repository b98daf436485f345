package io.zse.backend.cpu;

import io.zse.backend.F16KvRows;
import io.zse.backend.F32KvRows;
import io.zse.backend.Int8KvRows;
import io.zse.backend.KvRows;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import static io.zse.backend.cpu.ScalarKvRowProducts.accumulateFrom;
import static io.zse.backend.cpu.ScalarKvRowProducts.dotFrom;
import static io.zse.backend.cpu.ScalarKvRowProducts.rowScale;

/** {@link KvRowProducts} with the Vector API, widening the stored elements to F32 inside the vector loop. */
final class VectorKvRowProducts implements KvRowProducts {
    static final VectorKvRowProducts INSTANCE = new VectorKvRowProducts();
    private static final int LANES = Matmul.FLOATS.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private VectorKvRowProducts() {
    }

    @Override
    public float dot(KvRows rows, int slot, int headOffset, MemorySegment q, long qOffset, int headDim) {
        long base = (long) slot * rows.kvDim() + headOffset;
        FloatVector acc = FloatVector.zero(Matmul.FLOATS);
        int i = 0;
        for (int upper = Matmul.FLOATS.loopBound(headDim); i < upper; i += LANES) {
            acc = load(rows, base + i).fma(Matmul.floatsAt(q, qOffset + i), acc);
        }
        float sum = dotFrom(i, acc.reduceLanes(VectorOperators.ADD), rows, base, q, qOffset, headDim);
        return sum * rowScale(rows, slot, headOffset, headDim);
    }

    @Override
    public void accumulate(KvRows rows, int slot, int headOffset, float p, MemorySegment out, long outOffset,
                           int headDim) {
        long base = (long) slot * rows.kvDim() + headOffset;
        float a = p * rowScale(rows, slot, headOffset, headDim);
        FloatVector broadcast = FloatVector.broadcast(Matmul.FLOATS, a);
        int i = 0;
        for (int upper = Matmul.FLOATS.loopBound(headDim); i < upper; i += LANES) {
            FloatVector sum = load(rows, base + i).fma(broadcast, Matmul.floatsAt(out, outOffset + i));
            Matmul.storeAt(sum, out, outOffset + i);
        }
        accumulateFrom(i, rows, base, a, out, outOffset, headDim);
    }

    /** LANES stored elements from {@code index}, widened to F32 (INT8: the codes, unscaled). */
    private static FloatVector load(KvRows rows, long index) {
        return switch (rows) {
            case F32KvRows r -> FloatVector.fromMemorySegment(Matmul.FLOATS, r.data(), index * Float.BYTES, NATIVE);
            case F16KvRows r -> F16Matmul.widenF16((IntVector) ShortVector.fromMemorySegment(Matmul.SHORTS, r.data(),
                    index * Short.BYTES, NATIVE).convertShape(VectorOperators.S2I, Matmul.INTS, 0));
            case Int8KvRows r -> (FloatVector) ByteVector.fromMemorySegment(Matmul.BYTES, r.codes(), index, NATIVE)
                    .convertShape(VectorOperators.B2F, Matmul.FLOATS, 0);
        };
    }
}
