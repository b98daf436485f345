package io.zse.backend.cuda;

import io.zse.format.TensorType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;

/**
 * The CUDA backend's integer products (zse_cuda_integer_matvec): Q8, Q4, Q4_K and Q6_K weights times up to
 * {@value QuantizedActivations#MAX_ROWS} activation rows quantized to int8, as the CPU's native kernels compute them.
 * Decides which products take that path, finds an input's int8 form (written by the op that produced the input, a
 * norm, SwiGLU or the decode attention, or quantized here) and launches weights that share an input together.
 *
 * <p>The int8 form an op wrote serves the op right after it only ({@link #enter} counts the ops), so a later write to
 * the same activations can never leave a stale one behind.
 */
final class IntegerProducts implements AutoCloseable {
    private static final Set<TensorType> TYPES = EnumSet.of(TensorType.Q8, TensorType.Q4, TensorType.Q4_K,
            TensorType.Q6_K);
    /** The most weights one launch takes (q, k and v). */
    private static final int MAX_SHARED_WEIGHTS = 3;
    private static final long POINTERS = ValueLayout.ADDRESS.byteSize() * MAX_SHARED_WEIGHTS;

    private final CudaLibrary cuda;
    private final boolean enabled;
    private final Shapes shapes;
    private final QuantizedActivations scratch;
    /** [data x 3 | scales x 3 | outputs x 3 | rows x 3]: the weight lists of a launch, read during the call only. */
    private final MemorySegment arguments;
    private int widestCols;       // the widest weight of these types: sizes the scratch
    private Written written;      // what an op wrote in int8 too, or null
    private long ops;             // ops entered so far
    private long quantizations;   // inputs quantized by a launch of their own

    /**
     * How the kernels cut a product into blocks, where a benchmark fixes it (0: as the kernel picks). {@code mmaRows}:
     * the weight rows of a tensor-core block (9 to 64 activation rows), 0 (32 up to 32 activation rows, 16 above) or
     * 16. {@code rowWarps}: the warps that split a weight row's columns in the DP4A kernel (up to 8 activation rows,
     * and Q6_K's), 0 (by the row's length), 1, 2, 4 or 8.
     */
    record Shapes(int mmaRows, int rowWarps) {
        static final Shapes BY_KERNEL = new Shapes(0, 0);

        /** ZSE_CUDA_MMA_ROWS and ZSE_CUDA_ROW_WARPS. */
        static Shapes fromEnvironment() {
            return new Shapes(mmaRowsSetting(System.getenv("ZSE_CUDA_MMA_ROWS")),
                    rowWarpsSetting(System.getenv("ZSE_CUDA_ROW_WARPS")));
        }
    }

    /** {@code enabled} false: every product takes F32 activations (what a float reference computes). */
    IntegerProducts(CudaLibrary cuda, boolean enabled, Shapes shapes) {
        this.cuda = cuda;
        this.enabled = enabled;
        this.shapes = shapes;
        this.scratch = new QuantizedActivations(cuda);
        this.arguments = Arena.ofAuto().allocate(3 * POINTERS + (long) Integer.BYTES * MAX_SHARED_WEIGHTS, 8);
    }

    /** The int8 form of {@code floats} values of {@code values}, written by op number {@code op}. */
    private record Written(long op, DeviceActivations values, long floats, QuantizedActivations.Parts parts) {
    }

    /** Notes a weight the backend prepared (the widest one sizes the scratch). */
    void register(CudaWeight w) {
        if (takes(w, 1)) {
            widestCols = Math.max(widestCols, w.cols());
        }
    }

    /**
     * ZSE_CUDA_MMA_ROWS: 16 gives the tensor-core blocks 16 weight rows (twice the blocks, three a multiprocessor), to
     * compare with the default on a GPU (bench/gpu-ab.sh); unset or 32, the default; anything else refused.
     */
    static int mmaRowsSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_MMA_ROWS", value, "32", "16", "32").equals("16") ? 16 : 0;
    }

    /**
     * ZSE_CUDA_ROW_WARPS: 1, 2, 4 or 8 fixes the warps a DP4A product splits each weight row among (1: a warp a row,
     * as before the split), to compare with the default on a GPU; unset, by the row's length; anything else refused.
     */
    static int rowWarpsSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_ROW_WARPS", value, "0", "1", "2", "4", "8"));
    }

    /** Whether w times n activation rows is an integer product. */
    boolean takes(CudaWeight w, int n) {
        return enabled && n <= QuantizedActivations.MAX_ROWS && TYPES.contains(w.type());
    }

    /**
     * Where an op writing {@code floats} activations in n rows of {@code cols} should write their int8 form too, or
     * null where no integer product could take them next; the op then calls {@link #wrote}.
     */
    QuantizedActivations.Parts outputFor(int n, long floats, int cols) {
        if (!enabled || widestCols == 0 || cols % QuantizedActivations.BLOCK != 0
                || n > QuantizedActivations.MAX_ROWS || floats > (long) QuantizedActivations.MAX_ROWS * widestCols) {
            return null;
        }
        return scratch.parts(floats, widestCols);
    }

    /**
     * The op now running wrote {@code floats} values of {@code values} with their int8 form at {@code parts} (null:
     * without one).
     */
    void wrote(DeviceActivations values, long floats, QuantizedActivations.Parts parts) {
        written = parts == null ? null : new Written(ops, values, floats, parts);
    }

    /** An op enters the backend. */
    void enter() {
        ops++;
    }

    /**
     * The int8 form of input [n, cols] at {@code at}: the one the previous op wrote with it, or quantized now on
     * {@code stream}.
     */
    QuantizedActivations.Parts input(DeviceActivations input, MemorySegment at, int n, int cols, CudaStream stream) {
        Written w = written;
        if (w != null && w.op() == ops - 1 && w.values() == input && w.floats() == (long) n * cols) {
            return w.parts();
        }
        quantizations++;
        return scratch.quantize(at, n, cols, widestCols, stream);
    }

    /** How many of the weights from {@code from} on one launch takes: the same type and group, at most three. */
    static int run(CudaWeight[] w, int from) {
        int count = 1;
        while (from + count < w.length && count < MAX_SHARED_WEIGHTS && w[from + count].type() == w[from].type()
                && w[from + count].groupSize() == w[from].groupSize()) {
            count++;
        }
        return count;
    }

    /** Queues out_j = x . w_j^T for w[from .. from + count), all of width cols, x [n, cols] as int8 at {@code x}. */
    void launch(CudaWeight[] w, MemorySegment[] out, int from, int count, int n, int cols,
                QuantizedActivations.Parts x, CudaStream stream) {
        for (int i = 0; i < count; i++) {
            arguments.setAtIndex(ValueLayout.ADDRESS, i, w[from + i].data());
            arguments.setAtIndex(ValueLayout.ADDRESS, MAX_SHARED_WEIGHTS + i, w[from + i].scales());
            arguments.setAtIndex(ValueLayout.ADDRESS, 2L * MAX_SHARED_WEIGHTS + i, out[from + i]);
            arguments.setAtIndex(ValueLayout.JAVA_INT, 6L * MAX_SHARED_WEIGHTS + i, w[from + i].rows());
        }
        cuda.call("zse_cuda_integer_matvec", w[from].type().code(), w[from].groupSize(), cols, count, arguments,
                arguments.asSlice(POINTERS), arguments.asSlice(3 * POINTERS), arguments.asSlice(2 * POINTERS),
                x.codes(), x.scales(), x.sums(), n, shapes.mmaRows(), shapes.rowWarps(), stream.handle());
    }

    /** Inputs quantized by a launch of their own so far (tests: the fused ones are not). */
    long quantizations() {
        return quantizations;
    }

    @Override
    public void close() {
        scratch.close();
    }
}
