package io.zse.backend.cpu;

import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

/**
 * The native kernels ({@link NativeCpuLibrary}) for every weight product, with the Java kernels this process would
 * otherwise run ({@code java}: vector or scalar) for what is not a product: single-row reads, attention over the KV
 * pool and the read-bandwidth probe.
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
        java.swiglu(gate, up, length);
    }

    @Override
    public void geglu(MemorySegment gate, MemorySegment up, int length) {
        java.geglu(gate, up, length);
    }

    @Override
    public KvRowProducts kvRowProducts() {
        return java.kvRowProducts();
    }

    @Override
    public double readAll(MemorySegment buffer, long offset, long length) {
        return java.readAll(buffer, offset, length);
    }
}
