package io.zse.backend.cpu;

import io.zse.backend.AttentionShape;
import io.zse.backend.BatchLayout;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

/**
 * One family of CPU kernels: native SIMD ({@link NativeKernels}), the Vector API ones ({@link VectorKernels}) or plain
 * Java ({@link ScalarKernels}), chosen once per process by {@link CpuKernelChoice}. No Vector API type appears here, so a process on the scalar kernels
 * never loads {@code jdk.incubator.vector} (it may not have it: native images, JVMs started without the module).
 */
public sealed interface CpuKernels permits VectorKernels, ScalarKernels, NativeKernels {

    /** {@code native}, {@code vector} or {@code scalar}, as {@code zse.cpu.kernels} spells it. */
    String name();

    /** Prepares a 2-D weight of any storage type; it stays a view of the mapped bytes. */
    CpuWeight weight(ZseTensor tensor);

    /**
     * gate[k] = silu(gate[k]) * up[k] for k < length, over F32 activations in native order ({@link HostActivations}):
     * SwiGLU, whose exponential is a visible share of a prefill.
     */
    void swiglu(MemorySegment gate, MemorySegment up, int length);

    /** gate[k] = gelu_tanh(gate[k]) * up[k] for k < length: Gemma's GeGLU. */
    void geglu(MemorySegment gate, MemorySegment up, int length);

    /** The products attention takes with cached key and value rows. */
    KvRowProducts kvRowProducts();

    /** See {@link io.zse.backend.Backend#rmsNorm}. */
    default void rmsNorm(MemorySegment x, int n, float[] weight, float eps, MemorySegment out) {
        JavaElementwise.rmsNorm(x, n, weight, eps, out);
    }

    /** Rows [fromRow, toRow) of x, row i at positions[i]: see {@link io.zse.backend.Backend#rope}. */
    default void rope(MemorySegment x, int fromRow, int toRow, int[] positions, int heads, int headDim,
                      float[] inverseFrequencies) {
        JavaElementwise.rope(x, fromRow, toRow, positions, heads, headDim, inverseFrequencies);
    }

    /** x[k] += y[k] for k < length. */
    default void add(MemorySegment x, MemorySegment y, int length) {
        JavaElementwise.add(x, y, length);
    }

    /** x[k] *= factor for k < length. */
    default void scale(MemorySegment x, int length, float factor) {
        JavaElementwise.scale(x, length, factor);
    }

    /** gate[k] = relu(gate[k])² * up[k] for k < length: BitNet's gating. */
    default void reluSquaredGlu(MemorySegment gate, MemorySegment up, int length) {
        JavaElementwise.reluSquaredGlu(gate, up, length);
    }

    /** See {@link io.zse.backend.Backend#attention}, the rows of the batch split over {@code threads}. */
    default void attention(MemorySegment q, BatchLayout batch, int layer, AttentionShape shape, MemorySegment out,
                           CpuThreads threads) {
        CpuAttention.attend(q, batch, layer, shape, out, kvRowProducts(), threads);
    }

    /**
     * Reads every byte of buffer[offset, offset + length) (length a multiple of 4 KiB) and returns a value that depends
     * on all of them, so the JIT cannot drop the reads: the read kernel of {@link ReadBandwidth}.
     */
    double readAll(MemorySegment buffer, long offset, long length);
}
