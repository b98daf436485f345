package io.zse.backend.cpu;

import io.zse.format.HalfFloats;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;

/** IEEE binary16 weights. */
public final class F16Matmul extends TwoByteMatmul {
    F16Matmul(ZseTensor tensor) {
        super(tensor);
    }

    @Override
    FloatVector widen(IntVector bits) {
        return widenF16(bits);
    }

    /** F32 values of FLOATS.length() binary16 patterns, sign-extended in {@code bits}; exact (F16 ⊂ F32). */
    static FloatVector widenF16(IntVector bits) {
        // Exponent and mantissa moved into F32 position, then rebiased by 2^(127-15): exact for normals and
        // subnormals alike. Infinity/NaN (exponent 31) get the F32 all-ones exponent instead.
        IntVector magnitude = bits.and(0x7fff).lanewise(VectorOperators.LSHL, 13);
        IntVector finite = magnitude.reinterpretAsFloats().mul(0x1p112f).reinterpretAsInts();
        VectorMask<Integer> special = bits.and(0x7c00).eq(0x7c00);
        IntVector value = finite.blend(magnitude.or(0x70000000), special);
        return value.or(bits.and(0x8000).lanewise(VectorOperators.LSHL, 16)).reinterpretAsFloats();
    }

    @Override
    float widen(short bits) {
        return HalfFloats.fromF16(bits);
    }
}
