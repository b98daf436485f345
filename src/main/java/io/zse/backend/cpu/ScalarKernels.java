package io.zse.backend.cpu;

import io.zse.format.InterleavedRows;
import io.zse.format.LittleEndian;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/** The plain-Java kernels: {@link ScalarMatmul} for every weight type, {@link ScalarKvRowProducts} for attention. */
public final class ScalarKernels implements CpuKernels {
    public static final ScalarKernels INSTANCE = new ScalarKernels();

    private ScalarKernels() {
    }

    @Override
    public String name() {
        return "scalar";
    }

    @Override
    public CpuWeight weight(ZseTensor tensor) {
        return new ScalarMatmul(InterleavedRows.toRowGroups(tensor));
    }

    @Override
    public void swiglu(MemorySegment gate, MemorySegment up, int length) {
        swiglu(gate, up, 0, length);
    }

    /** The elements [from, to). */
    void swiglu(MemorySegment gate, MemorySegment up, int from, int to) {
        for (long k = from; k < to; k++) {
            float g = gate.getAtIndex(FLOAT, k);
            gate.setAtIndex(FLOAT, k, g / (1f + (float) Math.exp(-g)) * up.getAtIndex(FLOAT, k));
        }
    }

    @Override
    public void geglu(MemorySegment gate, MemorySegment up, int length) {
        geglu(gate, up, 0, length);
    }

    /** The elements [from, to), in F32 as PyTorch's gelu(approximate="tanh"): 0.5 g (1 + tanh(√(2/π) (g + 0.044715 g³))). */
    void geglu(MemorySegment gate, MemorySegment up, int from, int to) {
        for (long k = from; k < to; k++) {
            float g = gate.getAtIndex(FLOAT, k);
            float inner = GELU_SQRT_2_OVER_PI * (g + GELU_CUBIC * (g * g * g));
            gate.setAtIndex(FLOAT, k, 0.5f * g * (1f + (float) Math.tanh(inner)) * up.getAtIndex(FLOAT, k));
        }
    }

    static final float GELU_SQRT_2_OVER_PI = (float) Math.sqrt(2 / Math.PI);
    static final float GELU_CUBIC = 0.044715f;

    @Override
    public KvRowProducts kvRowProducts() {
        return ScalarKvRowProducts.INSTANCE;
    }

    /** Sums 8-byte words in four independent chains: integer adds keep up with memory where one float chain would not. */
    @Override
    public double readAll(MemorySegment buffer, long offset, long length) {
        long a = 0;
        long b = 0;
        long c = 0;
        long d = 0;
        for (long p = offset, end = offset + length; p < end; p += 32) {
            a += buffer.get(LittleEndian.LONG, p);
            b += buffer.get(LittleEndian.LONG, p + 8);
            c += buffer.get(LittleEndian.LONG, p + 16);
            d += buffer.get(LittleEndian.LONG, p + 24);
        }
        return a + b + c + d;
    }
}
