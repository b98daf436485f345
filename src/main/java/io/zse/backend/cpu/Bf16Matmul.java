package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/** bfloat16 weights: the top half of an F32. */
public final class Bf16Matmul extends TwoByteMatmul {
    Bf16Matmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    FloatVector widen(IntVector bits) {
        return bits.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    @Override
    float widen(short bits) {
        return HalfFloats.fromBf16(bits);
    }
}
