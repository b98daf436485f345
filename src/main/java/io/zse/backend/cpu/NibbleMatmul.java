package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

/**
 * The 4-bit types' shared packing: in each group, byte j holds element j in its low nibble and element j + g/2 in its
 * high nibble, so one load of packed bytes yields two runs of codes with no shuffle.
 */
public abstract sealed class NibbleMatmul extends Matmul permits Q4Matmul, Nf4Matmul {
    NibbleMatmul(ZseTensor tensor) {
        super(tensor);
    }

    /** Packed bytes at {@code byteOffset} of the tensor's data, one per float lane. */
    final ByteVector packed(long byteOffset) {
        return ByteVector.fromMemorySegment(BYTES, data, byteOffset, ByteOrder.LITTLE_ENDIAN);
    }

    /** Codes 0..15 of the first half of the group. */
    static ByteVector lowCodes(ByteVector packed) {
        return packed.and((byte) 0x0F);
    }

    /** Codes 0..15 of the second half of the group. */
    static ByteVector highCodes(ByteVector packed) {
        return packed.lanewise(VectorOperators.LSHR, 4).and((byte) 0x0F);
    }
}
