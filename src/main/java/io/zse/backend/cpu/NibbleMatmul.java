package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import java.nio.ByteOrder;

/**
 * The 4-bit types' shared packing: in each group, byte j holds element j in its low nibble and element j + g/2 in its
 * high nibble, so one load of packed bytes yields two runs of codes with no shuffle.
 */
public abstract sealed class NibbleMatmul extends Matmul permits Q4Matmul, Q5Matmul, Nf4Matmul {
    NibbleMatmul(ZseTensor tensor) {
        super(tensor);
    }

    /**
     * Packed bytes at {@code byteOffset} of the tensor's data, zero-extended, one per int lane. The nibbles are split
     * in int lanes because x86 has no byte shift: a byte-lane shift is emulated and made the 4-bit kernels 3x slower.
     */
    final IntVector packed(long byteOffset) {
        return (IntVector) ByteVector.fromMemorySegment(BYTES, data, byteOffset, ByteOrder.LITTLE_ENDIAN)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, INTS, 0);
    }

    /** Codes 0..15 of the first half of the group. */
    static IntVector lowCodes(IntVector packed) {
        return packed.and(0x0F);
    }

    /** Codes 0..15 of the second half of the group: the byte was zero-extended, so a shift alone isolates them. */
    static IntVector highCodes(IntVector packed) {
        return packed.lanewise(VectorOperators.LSHR, 4);
    }
}
