package io.zse.backend.cpu;

import io.zse.format.InterleavedRows;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * A weight whose products run in the native kernels ({@link NativeCpuLibrary}), read in place from the mapped file.
 * Q8, Q4 and the K-quants multiply activations quantized to int8 per block of 32 (integer dot products are the fast
 * path on every SIMD set), TERNARY multiplies them quantized per row as BitNet does ({@link TernaryActivations}); NF4,
 * F16, BF16 and F32 multiply float activations. Single-row reads (embedding lookups, one dot) go to
 * the Java kernels of the same tensor: they are not where the time is. A tensor in layout interleaved-16 (16 rows side
 * by side, {@link InterleavedRows}) has products only here; its single rows are gathered and decoded in plain Java.
 */
public final class NativeWeight extends CpuWeight {
    /** Weight rows per task handed to a thread: the kernels' tile height, so no tile is split between threads. */
    private static final int ROWS_PER_ITEM = 4;

    private final NativeCpuLibrary library;
    private final ZseTensor tensor;
    private final boolean interleaved;
    /** The Java kernels' weight, for single rows; null when interleaved (those kernels read row-groups only). */
    private final CpuWeight java;

    NativeWeight(ZseTensor tensor, NativeCpuLibrary library, CpuKernels javaKernels) {
        super(tensor);
        this.library = library;
        this.tensor = tensor;
        this.interleaved = tensor.info().layout() == ZseLayout.LAYOUT_INTERLEAVED_16;
        this.java = interleaved ? null : javaKernels.weight(tensor);
        requireBytes(data.byteSize(), type.dataBytes((long) rows * cols), "data");
        if (interleaved && !InterleavedRows.allows(type, groupSize, tensor.shape())) {
            throw new IllegalArgumentException(tensor.name() + ": " + type + "/" + groupSize
                    + " is not stored in layout interleaved-16");
        }
        switch (type) {
            case Q8, Q5 -> requireGroupSize(32);
            case NF4 -> requireGroupSize(64);
            case TERNARY -> requireGroupSize(TernaryBlocks.BLOCK);
            case Q4 -> requireGroupSize(groupSize == 64 || groupSize == 128 ? groupSize : 32);
            case Q4_K, Q5_K, Q6_K -> requireGroupSize(256);
            default -> { }
        }
        if (type.isQuantized()) {
            requireBytes(scales.byteSize(), type.scaleBytes((long) rows * cols, groupSize), "scales");
        }
    }

    private void requireBytes(long actual, long expected, String region) {
        if (actual < expected) {
            throw new IllegalArgumentException(type + " weight [" + rows + ", " + cols + "]: its " + region + " hold "
                    + actual + " bytes, it needs " + expected);
        }
    }

    @Override
    public float dot(int row, MemorySegment x, long xOffset) {
        if (!interleaved) {
            return java.dot(row, x, xOffset);
        }
        float[] decoded = decodedRow(row);
        float sum = 0;
        for (int k = 0; k < cols; k++) {
            sum += decoded[k] * x.getAtIndex(FLOAT, xOffset + k);
        }
        return sum;
    }

    @Override
    public void decodeRow(int row, MemorySegment out, long offset) {
        if (!interleaved) {
            java.decodeRow(row, out, offset);
            return;
        }
        MemorySegment.copy(decodedRow(row), 0, out, FLOAT, offset * Float.BYTES, cols);
    }

    /** An interleaved tensor's row gathered out of its tile and decoded (single rows only: not where the time is). */
    private float[] decodedRow(int row) {
        MemorySegment rowData = MemorySegment.ofArray(new byte[(int) type.dataBytes(cols)]);
        MemorySegment rowScales = MemorySegment.ofArray(new byte[(int) type.scaleBytes(cols, groupSize)]);
        InterleavedRows.readRow(tensor, row, rowData, rowScales);
        float[] decoded = new float[cols];
        TensorDecoder.decode(type, groupSize, rowData, rowScales, 0, cols, decoded, 0);
        return decoded;
    }

    /** Unused: {@link #multiply} runs every product in the native kernels. */
    @Override
    void multiplyTile(MemorySegment tile, int tileRows, MemorySegment x, int n, MemorySegment out, int outStride,
                      int firstRow) {
        for (int r = 0; r < tileRows; r++) {
            for (int i = 0; i < n; i++) {
                float sum = 0;
                for (int k = 0; k < cols; k++) {
                    sum += tile.getAtIndex(FLOAT, (long) r * cols + k) * x.getAtIndex(FLOAT, (long) i * cols + k);
                }
                out.setAtIndex(FLOAT, (long) i * outStride + firstRow + r, sum);
            }
        }
    }

    @Override
    public void multiply(MemorySegment x, int n, MemorySegment out, CpuThreads threads) {
        checkProduct(x, n, out);
        if (takesInt8Blocks()) {
            multiplyTogether(new NativeWeight[] {this}, x, n, new MemorySegment[] {out}, threads);
            return;
        }
        int items = (rows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
        long work = (long) ROWS_PER_ITEM * cols * n;
        switch (type) {
            case TERNARY -> {
                TernaryActivations q = TernaryActivations.quantize(x, 0, n, cols);
                float scale = TernaryBlocks.scale(scales);
                threads.parallelFor(items, work, (start, end) -> library.matmulTernary(data, scale, cols,
                        start * ROWS_PER_ITEM, Math.min(rows, end * ROWS_PER_ITEM), q, n, out, rows));
            }
            case NF4 -> threads.parallelFor(items, work, (start, end) -> library.matmulNf4(data, scales, cols,
                    start * ROWS_PER_ITEM, Math.min(rows, end * ROWS_PER_ITEM), x, n, out, rows));
            default -> threads.parallelFor(items, work, (start, end) -> library.matmulFloat(type, data, cols,
                    start * ROWS_PER_ITEM, Math.min(rows, end * ROWS_PER_ITEM), x, n, out, rows));
        }
    }

    private void checkProduct(MemorySegment x, int n, MemorySegment out) {
        long inputs = x.byteSize() / Float.BYTES;
        long outputs = out.byteSize() / Float.BYTES;
        if (n < 1 || inputs < (long) n * cols || outputs < (long) n * rows) {
            throw new IllegalArgumentException("a product of " + n + " rows with a [" + rows + ", " + cols
                    + "] weight needs " + (long) n * cols + " inputs and " + (long) n * rows + " outputs, not "
                    + inputs + " and " + outputs);
        }
    }

    /** Whether this weight's products take activations quantized to int8 per block of 32 ({@link QuantizedRows}). */
    boolean takesInt8Blocks() {
        return switch (type) {
            case Q8, Q4, Q5, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    /**
     * outs[j] = x · ws[j]ᵀ for weights that all take int8 blocks and share x's width: x is quantized once and every
     * weight's rows are items of one parallel loop. Decoding runs q/k/v and gate/up this way: at batch 1 the small
     * products cost more in the loop's hand-off than in reading their bytes, so one loop instead of three (or two)
     * saves that fixed cost.
     */
    static void multiplyTogether(NativeWeight[] ws, MemorySegment x, int n, MemorySegment[] outs, CpuThreads threads) {
        int cols = ws[0].cols;
        int[] firstItem = new int[ws.length + 1];
        long work = 0;
        for (int j = 0; j < ws.length; j++) {
            if (ws[j].cols != cols || !ws[j].takesInt8Blocks()) {
                throw new IllegalArgumentException("products of one input need int8-block weights of one width");
            }
            ws[j].checkProduct(x, n, outs[j]);
            firstItem[j + 1] = firstItem[j] + ws[j].int8Items();
            work += (long) ws[j].rows * cols * n;
        }
        QuantizedRows q = QuantizedRows.forThread(Math.multiplyExact(n, cols));
        ws[0].library.quantizeRows(x, n, cols, q);
        int items = firstItem[ws.length];
        threads.parallelFor(items, work / items, (start, end) -> {
            for (int j = 0; j < ws.length; j++) {
                int from = Math.max(start, firstItem[j]);
                int to = Math.min(end, firstItem[j + 1]);
                if (from < to) {
                    ws[j].multiplyItems(from - firstItem[j], to - firstItem[j], q, n, outs[j]);
                }
            }
        });
    }

    /** Items of an int8 product: tiles of 16 rows when interleaved (the rows after the last tile go with the last). */
    private int int8Items() {
        return interleaved ? Math.max(1, rows / InterleavedRows.ROWS) : (rows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
    }

    /** Items [start, end) of the int8 product of q's n rows, into out [n, rows]. */
    private void multiplyItems(int start, int end, QuantizedRows q, int n, MemorySegment out) {
        if (interleaved) {
            int first = start * InterleavedRows.ROWS;
            int last = end == int8Items() ? rows : end * InterleavedRows.ROWS;
            library.matmulInterleaved(type, data, scales, groupSize, rows, cols, first, last, q, n, out, rows);
            return;
        }
        int first = start * ROWS_PER_ITEM;
        int last = Math.min(rows, end * ROWS_PER_ITEM);
        switch (type) {
            case Q8 -> library.matmulQ8(data, scales, cols, first, last, q, n, out, rows);
            case Q4 -> library.matmulQ4(data, scales, groupSize, cols, first, last, q, n, out, rows);
            default -> library.matmulKQuant(type, data, scales, cols, first, last, q, n, out, rows);
        }
    }
}
