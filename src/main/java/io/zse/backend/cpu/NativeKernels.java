package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.BatchLayout;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

/**
 * The native kernels ({@link NativeCpuLibrary}) for every weight product, the element-wise ops and attention over the
 * KV pool and the read-bandwidth probe, with the Java kernels this process would otherwise run ({@code java}: vector or
 * scalar) for single-row reads and {@link #kvRowProducts}.
 */
public final class NativeKernels implements CpuKernels {
    private final NativeCpuLibrary library;
    private final CpuKernels java;

    NativeKernels(NativeCpuLibrary library, CpuKernels java) {
        this.library = library;
        this.java = java;
    }

    public NativeCpuLibrary library() {
        return library;
    }

    @Override
    public String name() {
        return "native";
    }

    @Override
    public CpuWeight weight(ZseTensor tensor) {
        return new NativeWeight(tensor, library, java);
    }

    @Override
    public void swiglu(MemorySegment gate, MemorySegment up, int length) {
        gating("zse_cpu_swiglu", gate, up, length);
    }

    @Override
    public void geglu(MemorySegment gate, MemorySegment up, int length) {
        gating("zse_cpu_geglu", gate, up, length);
    }

    @Override
    public void reluSquaredGlu(MemorySegment gate, MemorySegment up, int length) {
        gating("zse_cpu_relu2_glu", gate, up, length);
    }

    private void gating(String function, MemorySegment gate, MemorySegment up, int length) {
        requireFloats(gate, length, "gates");
        requireFloats(up, length, "up projections");
        library.gating(function, gate, up, length);
    }

    @Override
    public void rmsNorm(MemorySegment x, int n, float[] weight, float eps, MemorySegment out) {
        long floats = (long) n * weight.length;
        requireFloats(x, floats, "norm input");
        requireFloats(out, floats, "norm output");
        library.rmsNorm(x, n, weight.length, MemorySegment.ofArray(weight), eps, out);
    }

    @Override
    public void rope(MemorySegment x, int fromRow, int toRow, int[] positions, int heads, int headDim,
                     float[] inverseFrequencies) {
        if (fromRow < 0 || fromRow > toRow || toRow > positions.length || headDim / 2 > inverseFrequencies.length) {
            throw new IllegalArgumentException("rotary rows " + fromRow + ".." + toRow + " of " + positions.length
                    + ", head dim " + headDim + " with " + inverseFrequencies.length + " frequencies");
        }
        requireFloats(x, (long) toRow * heads * headDim, "rotary input");
        library.rope(x, fromRow, toRow, MemorySegment.ofArray(positions), heads, headDim,
                MemorySegment.ofArray(inverseFrequencies));
    }

    @Override
    public void add(MemorySegment x, MemorySegment y, int length) {
        requireFloats(x, length, "sum");
        requireFloats(y, length, "addend");
        library.add(x, y, length);
    }

    @Override
    public void scale(MemorySegment x, int length, float factor) {
        requireFloats(x, length, "scaled rows");
        library.scale(x, length, factor);
    }

    @Override
    public void attention(MemorySegment q, BatchLayout batch, int layer, AttentionShape shape, MemorySegment out,
                          CpuThreads threads) {
        NativeAttention.attend(library, q, batch, layer, shape, out, threads);
    }

    /** Refuses a negative count, or a segment shorter than {@code floats} floats, before C is handed it. */
    static void requireFloats(MemorySegment segment, long floats, String what) {
        if (floats < 0 || segment.byteSize() / Float.BYTES < floats) {
            throw new IllegalArgumentException(what + ": " + floats + " floats asked of a buffer of "
                    + segment.byteSize() / Float.BYTES);
        }
    }

    @Override
    public KvRowProducts kvRowProducts() {
        return java.kvRowProducts();
    }

    @Override
    public double readAll(MemorySegment buffer, long offset, long length) {
        if (offset < 0 || length < 0 || length % Float.BYTES != 0 || offset > buffer.byteSize() - length) {
            throw new IllegalArgumentException("read of " + length + " bytes at " + offset + " of a buffer of "
                    + buffer.byteSize());
        }
        return library.readAll(buffer.asSlice(offset, length), length / Float.BYTES);
    }
}
