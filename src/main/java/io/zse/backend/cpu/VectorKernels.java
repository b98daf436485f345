package io.zse.backend.cpu;

import io.zse.format.InterleavedRows;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * The Vector API kernels: {@link Matmul} with a subclass per weight type, {@link VectorKvRowProducts} for attention.
 * {@link CpuKernelChoice} touches this class only once it has found that they can run here.
 */
public final class VectorKernels implements CpuKernels {
    static final VectorKernels INSTANCE = new VectorKernels();

    private VectorKernels() {
    }

    @Override
    public String name() {
        return "vector";
    }

    @Override
    public CpuWeight weight(ZseTensor tensor) {
        return Matmul.of(InterleavedRows.toRowGroups(tensor));
    }

    /** The exponential is the JDK's vectorized one (a few ulps from Math.exp), then scalar for the tail. */
    @Override
    public void swiglu(MemorySegment gate, MemorySegment up, int length) {
        var species = Matmul.FLOATS;
        int k = 0;
        for (int bound = species.loopBound(length); k < bound; k += species.length()) {
            FloatVector g = FloatVector.fromMemorySegment(species, gate, 4L * k, HostActivations.ORDER);
            FloatVector silu = g.div(g.neg().lanewise(VectorOperators.EXP).add(1f));
            silu.mul(FloatVector.fromMemorySegment(species, up, 4L * k, HostActivations.ORDER))
                    .intoMemorySegment(gate, 4L * k, HostActivations.ORDER);
        }
        ScalarKernels.INSTANCE.swiglu(gate, up, k, length);
    }

    /** The JDK's vectorized tanh (a few ulps from Math.tanh), then scalar for the tail. */
    @Override
    public void geglu(MemorySegment gate, MemorySegment up, int length) {
        var species = Matmul.FLOATS;
        int k = 0;
        for (int bound = species.loopBound(length); k < bound; k += species.length()) {
            FloatVector g = FloatVector.fromMemorySegment(species, gate, 4L * k, HostActivations.ORDER);
            FloatVector inner = g.mul(g).mul(g).mul(ScalarKernels.GELU_CUBIC).add(g).mul(ScalarKernels.GELU_SQRT_2_OVER_PI);
            FloatVector gelu = g.mul(0.5f).mul(inner.lanewise(VectorOperators.TANH).add(1f));
            gelu.mul(FloatVector.fromMemorySegment(species, up, 4L * k, HostActivations.ORDER))
                    .intoMemorySegment(gate, 4L * k, HostActivations.ORDER);
        }
        ScalarKernels.INSTANCE.geglu(gate, up, k, length);
    }

    @Override
    public KvRowProducts kvRowProducts() {
        return VectorKvRowProducts.INSTANCE;
    }

    /** Sums the floats with four independent accumulators (one per load port slot). */
    @Override
    public double readAll(MemorySegment buffer, long offset, long length) {
        var species = Matmul.FLOATS;
        long step = species.vectorByteSize();
        FloatVector a = FloatVector.zero(species);
        FloatVector b = a;
        FloatVector c = a;
        FloatVector d = a;
        for (long p = offset, end = offset + length; p < end; p += 4 * step) {
            a = a.add(FloatVector.fromMemorySegment(species, buffer, p, ByteOrder.LITTLE_ENDIAN));
            b = b.add(FloatVector.fromMemorySegment(species, buffer, p + step, ByteOrder.LITTLE_ENDIAN));
            c = c.add(FloatVector.fromMemorySegment(species, buffer, p + 2 * step, ByteOrder.LITTLE_ENDIAN));
            d = d.add(FloatVector.fromMemorySegment(species, buffer, p + 3 * step, ByteOrder.LITTLE_ENDIAN));
        }
        return a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD);
    }
}
