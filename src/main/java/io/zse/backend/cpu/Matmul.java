package io.zse.backend.cpu;

import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;

/**
 * The Vector API kernels: one subclass per storage type supplies a vectorised fused dot product and row decode, and
 * prefill tiles go through {@link TileProduct}. Loaded only when {@link CpuKernelChoice} chose the vector kernels,
 * which it does only where the preferred float vector is 256 or 512 bits: the species below and the group loops of
 * the quantized kernels (8 or 16 lanes within a group of 32) are built for those widths.
 */
public abstract sealed class Matmul extends CpuWeight
        permits F32Matmul, TwoByteMatmul, Q8Matmul, NibbleMatmul, KQuantMatmul, TernaryMatmul {
    static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    /** Same lane count as FLOATS, so one load of stored elements widens to one float vector. */
    static final VectorSpecies<Integer> INTS = FLOATS.withLanes(int.class);
    static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(FLOATS.vectorBitSize() / 2));
    static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(FLOATS.vectorBitSize() / 4));

    protected Matmul(ZseTensor tensor) {
        super(tensor);
    }

    /** The kernel for the tensor's storage type. */
    public static Matmul of(ZseTensor tensor) {
        return switch (tensor.type()) {
            case F32 -> new F32Matmul(tensor);
            case F16 -> new F16Matmul(tensor);
            case BF16 -> new Bf16Matmul(tensor);
            case Q8 -> new Q8Matmul(tensor);
            case Q4 -> new Q4Matmul(tensor);
            case Q5 -> new Q5Matmul(tensor);
            case NF4 -> new Nf4Matmul(tensor);
            case Q4_K -> new Q4KMatmul(tensor);
            case Q5_K -> new Q5KMatmul(tensor);
            case Q6_K -> new Q6KMatmul(tensor);
            case TERNARY -> new TernaryMatmul(tensor);
        };
    }

    @Override
    final void multiplyTile(MemorySegment tile, int tileRows, MemorySegment x, int n, MemorySegment out, int outStride,
                            int firstRow) {
        TileProduct.multiply(tile, tileRows, x, n, cols, out, outStride, firstRow);
    }

    /** FLOATS.length() F32 activations from element {@code index} of x ({@link HostActivations}: native order). */
    static FloatVector floatsAt(MemorySegment x, long index) {
        return FloatVector.fromMemorySegment(FLOATS, x, index * Float.BYTES, HostActivations.ORDER);
    }

    /** Stores v as F32 activations from element {@code index} of out. */
    static void storeAt(FloatVector v, MemorySegment out, long index) {
        v.intoMemorySegment(out, index * Float.BYTES, HostActivations.ORDER);
    }
}
