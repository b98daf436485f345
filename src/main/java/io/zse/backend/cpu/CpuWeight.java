package io.zse.backend.cpu;

import io.zse.backend.WeightMatrix;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseTensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * A weight [rows = out, cols = in] as the CPU backend holds it: a view of its mapped bytes, multiplied in place. A
 * kernel family supplies the type-specific pieces (a fused dot product with one activation row, a row decode, the
 * product of a decoded tile); this class owns the loop structure shared by all of them. Free of Vector API types, so
 * the scalar kernels ({@link ScalarMatmul}) run without the {@code jdk.incubator.vector} module.
 */
public abstract sealed class CpuWeight implements WeightMatrix permits Matmul, ScalarMatmul, NativeWeight {
    protected final TensorType type;
    protected final MemorySegment data;
    protected final MemorySegment scales;
    protected final int rows;
    protected final int cols;
    protected final int groupSize;

    protected CpuWeight(ZseTensor tensor) {
        long[] shape = tensor.shape();
        if (shape.length != 2 || shape[0] > Integer.MAX_VALUE || shape[1] > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(tensor.name() + ": a weight matrix must be 2-D [out, in], not "
                    + tensor.info().shapeString());
        }
        this.type = tensor.type();
        this.data = tensor.data();
        this.scales = tensor.scales();
        this.rows = (int) shape[0];
        this.cols = (int) shape[1];
        this.groupSize = tensor.groupSize();
        if (type.isQuantized() && cols % groupSize != 0) {
            throw new IllegalArgumentException(tensor.name() + ": row length " + cols
                    + " is not a multiple of the group size " + groupSize);
        }
    }

    /** For kernels written for one group size: refuses a tensor with another. */
    protected final void requireGroupSize(int expected) {
        if (groupSize != expected) {
            throw new IllegalArgumentException(type + " weights need groups of " + expected + ", not " + groupSize);
        }
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public TensorType type() {
        return type;
    }

    /** Σ_k w[row, k] · x[xOffset + k], reading the row in place; x F32 activations, xOffset in floats. */
    public abstract float dot(int row, MemorySegment x, long xOffset);

    /** Decodes w[row, 0..cols) into out[offset..offset+cols) (F32 in native order, offset in floats). */
    public abstract void decodeRow(int row, MemorySegment out, long offset);

    /**
     * out[i * outStride + firstRow + r] = Σ_k tile[r * cols + k] · x[i * cols + k] for r < tileRows, i < n: the
     * product of decoded weight rows with every activation row.
     */
    abstract void multiplyTile(MemorySegment tile, int tileRows, MemorySegment x, int n, MemorySegment out,
                               int outStride, int firstRow);

    /**
     * Σ_k t[row, k] · q[qOffset + k] of a TERNARY weight's row with int8 activation codes, exact (in a float: every
     * partial sum is an integer below 2^24). This is the reference; the Vector API kernel overrides it.
     */
    protected float ternaryCodeDot(int row, MemorySegment q, long qOffset) {
        long first = (long) row * cols;
        int sum = 0;
        for (int k = 0; k < cols; k++) {
            sum += (TernaryBlocks.code(data, first + k) - 1) * q.get(ValueLayout.JAVA_BYTE, qOffset + k);
        }
        return sum;
    }

    /** A TERNARY weight's dot with one activation row, quantized first as BitNet does ({@link TernaryActivations}). */
    protected final float ternaryDot(int row, MemorySegment x, long xOffset) {
        TernaryActivations q = TernaryActivations.quantize(x, xOffset, 1, cols);
        return q.output(0, ternaryCodeDot(row, q.codes(), 0), TernaryBlocks.scale(scales));
    }

    /** out[n, rows] for a TERNARY weight: the activation rows quantized once, then integer products row by row. */
    private void multiplyTernary(MemorySegment x, int n, MemorySegment out, CpuThreads threads) {
        TernaryActivations q = TernaryActivations.quantize(x, 0, n, cols);
        float scale = TernaryBlocks.scale(scales);
        threads.parallelFor(rows, (long) cols * n, (start, end) -> {
            for (int r = start; r < end; r++) {
                for (int i = 0; i < n; i++) {
                    float codeDot = ternaryCodeDot(r, q.codes(), (long) i * cols);
                    out.setAtIndex(FLOAT, (long) i * rows + r, q.output(i, codeDot, scale));
                }
            }
        });
    }

    /** Decoding, out[rows] = w · x: one fused pass over the weights, nothing decoded to memory. */
    protected void multiplyVector(MemorySegment x, MemorySegment out, CpuThreads threads) {
        threads.parallelFor(rows, cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out.setAtIndex(FLOAT, r, dot(r, x, 0));
            }
        });
    }

    /** out[n, rows] = x[n, cols] · wᵀ, split over weight rows; x, out: F32 activations ({@link HostActivations}). */
    public void multiply(MemorySegment x, int n, MemorySegment out, CpuThreads threads) {
        if (type == TensorType.TERNARY) {
            multiplyTernary(x, n, out, threads);
            return;
        }
        if (n == 1) {
            multiplyVector(x, out, threads);
            return;
        }
        // Prefill: decode a tile of weight rows once (sized to stay in L2), then multiply it with every activation row.
        int tileRows = tileRows(cols);
        int tiles = (rows + tileRows - 1) / tileRows;
        threads.parallelFor(tiles, (long) tileRows * cols * n, (startTile, endTile) -> {
            try (Arena scratch = Arena.ofConfined()) {
                MemorySegment tile = scratch.allocate((long) tileRows * cols * Float.BYTES, 64);
                for (int t = startTile; t < endTile; t++) {
                    int first = t * tileRows;
                    int count = Math.min(rows, first + tileRows) - first;
                    for (int r = 0; r < count; r++) {
                        decodeRow(first + r, tile, (long) r * cols);
                    }
                    multiplyTile(tile, count, x, n, out, rows, first);
                }
            }
        });
    }

    /**
     * {@link #multiply(MemorySegment, int, MemorySegment, CpuThreads)} of host arrays, through off-heap copies: for
     * callers holding arrays (tests, tools), not the forward pass.
     */
    public final void multiply(float[] x, int n, float[] out, CpuThreads threads) {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment in = offHeap(x, arena);
            MemorySegment result = offHeap(out, arena);
            multiply(in, n, result, threads);
            MemorySegment.copy(result, FLOAT, 0, out, 0, out.length);
        }
    }

    /** {@link #dot(int, MemorySegment, long)} with a host array, through an off-heap copy. */
    public final float dot(int row, float[] x, int xOffset) {
        try (Arena arena = Arena.ofConfined()) {
            return dot(row, offHeap(x, arena), xOffset);
        }
    }

    /** {@link #decodeRow(int, MemorySegment, long)} into a host array, through an off-heap copy. */
    public final void decodeRow(int row, float[] out, int offset) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment decoded = arena.allocate((long) cols * Float.BYTES, 64);
            decodeRow(row, decoded, 0);
            MemorySegment.copy(decoded, FLOAT, 0, out, offset, cols);
        }
    }

    private static MemorySegment offHeap(float[] values, Arena arena) {
        MemorySegment copy = arena.allocate(Math.max(1, values.length) * (long) Float.BYTES, 64);
        MemorySegment.copy(values, 0, copy, FLOAT, 0, values.length);
        return copy.asSlice(0, (long) values.length * Float.BYTES);
    }

    /** Weight rows per prefill tile: about 128 KiB of F32, a multiple of 4, at least 4. */
    private static int tileRows(int cols) {
        return Math.max(4, Math.min(64, (128 << 10) / (4 * cols)) & ~3);
    }
}
