package io.zse.backend.cpu;

import io.zse.backend.WeightMatrix;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;

/**
 * A weight [rows = out, cols = in] multiplied in place from its mapped bytes. One subclass per storage type supplies
 * the two type-specific pieces, a fused dot product with one activation row and a row decode; this class owns the
 * loop structure shared by all of them.
 */
public abstract sealed class Matmul implements WeightMatrix
        permits F32Matmul, TwoByteMatmul, Q8Matmul, NibbleMatmul {
    static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    /** Same lane count as FLOATS, so one load of stored elements widens to one float vector. */
    static final VectorSpecies<Integer> INTS = FLOATS.withLanes(int.class);
    static final VectorSpecies<Short> SHORTS = VectorSpecies.of(short.class, VectorShape.forBitSize(FLOATS.vectorBitSize() / 2));
    static final VectorSpecies<Byte> BYTES = VectorSpecies.of(byte.class, VectorShape.forBitSize(FLOATS.vectorBitSize() / 4));

    protected final TensorType type;
    protected final MemorySegment data;
    protected final MemorySegment scales;
    protected final int rows;
    protected final int cols;
    protected final int groupSize;

    protected Matmul(ZseTensor tensor) {
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

    /** The kernel for the tensor's storage type. */
    public static Matmul of(ZseTensor tensor) {
        return switch (tensor.type()) {
            case F32 -> new F32Matmul(tensor);
            case F16 -> new F16Matmul(tensor);
            case BF16 -> new Bf16Matmul(tensor);
            case Q8 -> new Q8Matmul(tensor);
            case Q4 -> new Q4Matmul(tensor);
            case NF4 -> new Nf4Matmul(tensor);
        };
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

    /** Σ_k w[row, k] · x[xOffset + k], reading the row in place. */
    public abstract float dot(int row, float[] x, int xOffset);

    /** Decodes w[row, 0..cols) into out[offset..offset+cols). */
    public abstract void decodeRow(int row, float[] out, int offset);

    /** Decoding, out[rows] = w · x: one fused pass over the weights, nothing decoded to memory. */
    protected void multiplyVector(float[] x, float[] out, CpuThreads threads) {
        threads.parallelFor(rows, cols, (start, end) -> {
            for (int r = start; r < end; r++) {
                out[r] = dot(r, x, 0);
            }
        });
    }

    /** out[n, rows] = x[n, cols] · wᵀ, split over weight rows. */
    public final void multiply(float[] x, int n, float[] out, CpuThreads threads) {
        if (n == 1) {
            multiplyVector(x, out, threads);
            return;
        }
        // Prefill: decode a tile of weight rows once (sized to stay in L2), then multiply it with every activation row
        // in blocks of 4 weight rows x 2 activation rows, so each load feeds two multiply-adds instead of one.
        int tileRows = tileRows(cols);
        int tiles = (rows + tileRows - 1) / tileRows;
        threads.parallelFor(tiles, (long) tileRows * cols * n, (startTile, endTile) -> {
            float[] tile = new float[tileRows * cols];
            for (int t = startTile; t < endTile; t++) {
                int first = t * tileRows;
                int count = Math.min(rows, first + tileRows) - first;
                for (int r = 0; r < count; r++) {
                    decodeRow(first + r, tile, r * cols);
                }
                TileProduct.multiply(tile, count, x, n, cols, out, rows, first);
            }
        });
    }

    /** Weight rows per prefill tile: about 128 KiB of F32, a multiple of 4, at least 4. */
    private static int tileRows(int cols) {
        return Math.max(4, Math.min(64, (128 << 10) / (4 * cols)) & ~3);
    }
}
