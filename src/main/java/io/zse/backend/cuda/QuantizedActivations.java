package io.zse.backend.cuda;

import java.lang.foreign.MemorySegment;

/**
 * Device scratch for activations quantized to int8 ({@code zse_cuda_quantize_rows}), the input of the integer
 * products: the codes [n * cols], then the block scales d and the block sums s [n * cols / 32] F32, each part at a
 * 256-byte boundary. It grows to the largest input asked for, at least doubling (an allocation drops the recorded
 * graphs, so the first request reserves room for {@link #MAX_ROWS} rows of the widest input the backend knows of).
 * Rows of a multiple of 32 values quantize block by block alike whatever their width, so the parts depend on the
 * number of values only.
 */
final class QuantizedActivations implements AutoCloseable {
    /** ZSE_CUDA_INTEGER_ROWS: the most activation rows zse_cuda_integer_matvec takes. */
    static final int MAX_ROWS = 64;
    static final int BLOCK = 32;

    private final CudaLibrary cuda;
    private DeviceBuffer buffer;

    QuantizedActivations(CudaLibrary cuda) {
        this.cuda = cuda;
    }

    /** Where the three parts of one quantized input lie. */
    record Parts(MemorySegment codes, MemorySegment scales, MemorySegment sums) {
    }

    /** The parts of an int8 form for a launch's arguments, NULL where there is none (null). */
    static MemorySegment codes(Parts q) {
        return q == null ? MemorySegment.NULL : q.codes();
    }

    static MemorySegment scales(Parts q) {
        return q == null ? MemorySegment.NULL : q.scales();
    }

    static MemorySegment sums(Parts q) {
        return q == null ? MemorySegment.NULL : q.sums();
    }

    /**
     * Where the quantized form of {@code values} activations goes (rows of a multiple of 32), for a kernel that writes
     * it; {@code widestCols} sizes a first allocation.
     */
    Parts parts(long values, int widestCols) {
        long bytes = bytes(values);
        if (buffer == null || buffer.bytes() < bytes) {
            // at least twice the last size: prompts of growing lengths reallocate (and drop the graphs) a few times
            long size = Math.max(bytes, Math.max(bytes((long) MAX_ROWS * widestCols),
                    buffer == null ? 0 : 2 * buffer.bytes()));
            close();
            buffer = new DeviceBuffer(cuda, size);
        }
        long blockBytes = values / BLOCK * Float.BYTES;
        long scalesAt = aligned(values);
        long sumsAt = scalesAt + aligned(blockBytes);
        return new Parts(buffer.at(0, values), buffer.at(scalesAt, blockBytes), buffer.at(sumsAt, blockBytes));
    }

    /** Queues the quantization of x [n, cols] on {@code stream}: {@link #parts} filled by zse_cuda_quantize_rows. */
    Parts quantize(MemorySegment x, int n, int cols, int widestCols, CudaStream stream) {
        Parts parts = parts((long) n * cols, widestCols);
        cuda.call("zse_cuda_quantize_rows", x, n, cols, parts.codes(), parts.scales(), parts.sums(), stream.handle());
        return parts;
    }

    private static long bytes(long values) {
        return aligned(values) + 2 * aligned(values / BLOCK * Float.BYTES);
    }

    private static long aligned(long bytes) {
        return (bytes + 255) & ~255L;
    }

    @Override
    public void close() {
        if (buffer != null) {
            buffer.close();
            buffer = null;
        }
    }
}
