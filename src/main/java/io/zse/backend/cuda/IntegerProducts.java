package io.zse.backend.cuda;

import io.zse.format.TensorType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Set;

import static io.zse.backend.cuda.QuantizedActivations.codes;
import static io.zse.backend.cuda.QuantizedActivations.scales;
import static io.zse.backend.cuda.QuantizedActivations.sums;

/**
 * The CUDA backend's integer products (zse_cuda_integer_matvec): Q8, Q4, Q4_K and Q6_K weights times up to
 * {@value QuantizedActivations#MAX_ROWS} activation rows quantized to int8, as the CPU's native kernels compute them,
 * and prompts of more rows on the staged tensor-core products (where those run and take the weight).
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
    private final Variants variants;
    private final QuantizedActivations scratch;
    /** Prompts' int8 input (above MAX_ROWS rows): apart, so that the recorded graphs' scratch never moves. */
    private final QuantizedActivations promptScratch;
    /** The fused SwiGLU products' output in int8: apart from the scratch, where their own input may lie. */
    private final QuantizedActivations swigluScratch;
    /**
     * The norm's and split launches' completion counters (one for the norm, one per 64 rows of split products): each
     * launch leaves them at zero, and the launches run one after another on the compute stream, so they share them.
     */
    private DeviceBuffer counters;
    /** The staged products' partial sums where they split the columns (grown to the largest launch's). */
    private DeviceBuffer splitSums;
    private final int multiprocessors;
    /** [data x 3 | scales x 3 | outputs x 3 | rows x 3]: the weight lists of a launch, read during the call only. */
    private final MemorySegment arguments;
    private int widestCols;       // the widest weight of these types: sizes the scratch
    private Written written;      // what an op wrote in int8 too, or null
    private long ops;             // ops entered so far
    private long quantizations;   // inputs quantized by a launch of their own
    private long stagedLaunches;  // launches of the staged tensor-core products

    /**
     * The kernels' variants, where a benchmark fixes them. {@code mmaRows}: how the tensor-core products (9 to 64
     * activation rows) take their weight rows, 0 (staged through shared memory, 64 rows a block, where the width is a
     * multiple of 256; else as 32), 32 or 16 (blocks of that many rows reading their fragments from memory). {@code
     * productSplits}: the parts the staged products split the columns into, 0 (by the GPU's multiprocessors and the
     * rows, {@link LaunchShapes#productSplits}), 1, 2, 4 or 8. {@code rowWarps}: the warps that split a weight row's
     * columns in the DP4A kernel (up to 8 activation rows, and Q6_K's where it does not stage), 0 (by the row's
     * length at 1 and 2 rows, unsplit from 4), 1, 2, 4 or 8. {@code fusedSwiglu}: SwiGLU applied by the gate and up
     * products as they finish (up to {@value #FUSED_SWIGLU_ROWS} activation rows) rather than by a kernel of its own.
     * {@code norm}: where the add + RMSNorm after the output and down projections runs at one activation row
     * ({@link NormPlacement}). {@code fusedRope}: at one activation row,
     * the q, k and v products rotate each pair of rows of a q or k head and write the caches, rather than the RoPE + KV
     * kernel.
     * {@code int8Prompts}: prompts of more than {@value QuantizedActivations#MAX_ROWS} rows times weights the staged
     * products take (with {@code mmaRows} 0) run there rather than on the F16 tiles of zse_cuda_matmul.
     * {@code swigluAhead}: the row groups ahead of the one it multiplies that each warp of the fused SwiGLU products asks
     * L2 for (0: none but its first; a hint, the results are the same).
     */
    record Variants(int mmaRows, int productSplits, int rowWarps, boolean fusedSwiglu, NormPlacement norm,
                    boolean fusedRope, boolean int8Prompts, int swigluAhead) {
        static final Variants DEFAULT = new Variants(0, 0, 0, true, NormPlacement.PRODUCER, true, true, 0);

        /**
         * ZSE_CUDA_MMA_ROWS, ZSE_CUDA_PRODUCT_SPLITS, ZSE_CUDA_ROW_WARPS, ZSE_CUDA_SWIGLU, ZSE_CUDA_NORM,
         * ZSE_CUDA_ROPE, ZSE_CUDA_PROMPT_PRODUCTS and ZSE_CUDA_SWIGLU_AHEAD.
         */
        static Variants fromEnvironment() {
            return new Variants(mmaRowsSetting(System.getenv("ZSE_CUDA_MMA_ROWS")),
                    productSplitsSetting(System.getenv("ZSE_CUDA_PRODUCT_SPLITS")),
                    rowWarpsSetting(System.getenv("ZSE_CUDA_ROW_WARPS")),
                    fusedSetting("ZSE_CUDA_SWIGLU", System.getenv("ZSE_CUDA_SWIGLU")),
                    normSetting(System.getenv("ZSE_CUDA_NORM")),
                    fusedSetting("ZSE_CUDA_ROPE", System.getenv("ZSE_CUDA_ROPE")),
                    int8PromptsSetting(System.getenv("ZSE_CUDA_PROMPT_PRODUCTS")),
                    swigluAheadSetting(System.getenv("ZSE_CUDA_SWIGLU_AHEAD")));
        }
    }

    /** The most activation rows zse_cuda_swiglu_matvec takes (the DP4A kernel's). */
    static final int FUSED_SWIGLU_ROWS = 8;

    /** {@code enabled} false: every product takes F32 activations (what a float reference computes). */
    IntegerProducts(CudaLibrary cuda, boolean enabled, Variants variants, int multiprocessors) {
        this.cuda = cuda;
        this.multiprocessors = multiprocessors;
        this.enabled = enabled;
        this.variants = variants;
        this.scratch = new QuantizedActivations(cuda);
        this.swigluScratch = new QuantizedActivations(cuda);
        this.promptScratch = new QuantizedActivations(cuda);
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
     * ZSE_CUDA_MMA_ROWS: 32 or 16 gives the tensor-core products blocks of that many weight rows that read their
     * fragments from memory (the kernel before the staged one; 16: twice the blocks, three a multiprocessor), to
     * compare with the default on a GPU (bench/gpu-ab.sh); unset or "staged", the default (0); anything else refused.
     */
    static int mmaRowsSetting(String value) {
        String rows = BenchmarkSwitch.choice("ZSE_CUDA_MMA_ROWS", value, "staged", "staged", "16", "32");
        return rows.equals("staged") ? 0 : Integer.parseInt(rows);
    }

    /**
     * ZSE_CUDA_PRODUCT_SPLITS: 1, 2, 4 or 8 fixes the parts the staged tensor-core products split the columns into,
     * to compare with the default on a GPU; unset, by the rows and the multiprocessors (0); anything else refused.
     */
    static int productSplitsSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_PRODUCT_SPLITS", value, "0", "1", "2", "4", "8"));
    }

    /**
     * ZSE_CUDA_ROW_WARPS: 1, 2, 4 or 8 fixes the warps a DP4A product splits each weight row among (1: a warp a row,
     * as before the split), to compare with the default on a GPU; unset, by the row's length at up to 2 activation rows
     * and 1 from 4; anything else refused.
     */
    static int rowWarpsSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_ROW_WARPS", value, "0", "1", "2", "4", "8"));
    }

    /**
     * ZSE_CUDA_SWIGLU_AHEAD: 1, 2 or 4 row groups that each warp of the fused SwiGLU products asks L2 for ahead of the
     * one it multiplies, to compare with the default on a GPU; unset, 0 (only its first rows, before the wait for the
     * kernel ahead); anything else refused.
     */
    static int swigluAheadSetting(String value) {
        return Integer.parseInt(BenchmarkSwitch.choice("ZSE_CUDA_SWIGLU_AHEAD", value, "0", "0", "1", "2", "4"));
    }

    /**
     * ZSE_CUDA_SWIGLU or ZSE_CUDA_ROPE ({@code variable}): "separate" runs SwiGLU or RoPE + the KV write as a kernel of
     * its own after the products (as before the fusion), to compare on a GPU; unset or "fused", the default; anything
     * else refused.
     */
    static boolean fusedSetting(String variable, String value) {
        return BenchmarkSwitch.choice(variable, value, "fused", "fused", "separate").equals("fused");
    }

    /**
     * Where the RMSNorm after a one-row output or down projection runs, that projection having added its outputs to the
     * residual stream: SEPARATE, in the add + RMSNorm kernel after it; PRODUCER, in the projection's last block to
     * finish; CONSUMER, in every block of the next launch's products (q, k and v, or gate and up, where they are fused
     * launches), each norming the stream into its shared memory, so that the projection only adds (its blocks ended
     * with a fence and an atomic count, and its last block normed alone while the GPU idled).
     */
    enum NormPlacement { SEPARATE, PRODUCER, CONSUMER }

    /** ZSE_CUDA_NORM: "separate", "fused" (the producer's last block; also unset) or "consumer"; else refused. */
    static NormPlacement normSetting(String value) {
        return switch (BenchmarkSwitch.choice("ZSE_CUDA_NORM", value, "fused", "fused", "separate", "consumer")) {
            case "separate" -> NormPlacement.SEPARATE;
            case "consumer" -> NormPlacement.CONSUMER;
            default -> NormPlacement.PRODUCER;
        };
    }

    /**
     * ZSE_CUDA_PROMPT_PRODUCTS: "f16" gives prompts of the staged weights the F16 tiles of zse_cuda_matmul (the
     * products before the staged ones took prompts), to compare on a GPU; unset or "int8", the default (true);
     * anything else refused.
     */
    static boolean int8PromptsSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_PROMPT_PRODUCTS", value, "int8", "int8", "f16").equals("int8");
    }

    /**
     * Whether w times n activation rows is an integer product: up to MAX_ROWS rows of the integer types, and prompts of
     * more rows where the staged products take w.
     */
    boolean takes(CudaWeight w, int n) {
        if (!enabled || !TYPES.contains(w.type())) {
            return false;
        }
        return n <= QuantizedActivations.MAX_ROWS || variants.int8Prompts() && variants.mmaRows() == 0 && stages(w);
    }

    /**
     * Where an op writing {@code floats} activations in n rows of {@code cols} should write their int8 form too, or
     * null where no integer product could take them next; the op then calls {@link #wrote}.
     */
    QuantizedActivations.Parts outputFor(int n, long floats, int cols) {
        return quantizable(n, floats, cols) ? scratch.parts(floats, widestCols) : null;
    }

    /** Whether n rows of {@code cols}, {@code floats} in all, have an int8 form an integer product could take. */
    private boolean quantizable(int n, long floats, int cols) {
        return enabled && widestCols != 0 && cols % QuantizedActivations.BLOCK == 0
                && n <= QuantizedActivations.MAX_ROWS && floats <= (long) QuantizedActivations.MAX_ROWS * widestCols;
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
        return (n > QuantizedActivations.MAX_ROWS ? promptScratch : scratch).quantize(at, n, cols, widestCols, stream);
    }

    /**
     * How many of the weights from {@code from} on one launch of n rows takes ({@link #takes} w[from]): the same type
     * and group, at most three.
     */
    int run(CudaWeight[] w, int from, int n) {
        int count = 1;
        while (from + count < w.length && count < MAX_SHARED_WEIGHTS && w[from + count].type() == w[from].type()
                && w[from + count].groupSize() == w[from].groupSize() && takes(w[from + count], n)) {
            count++;
        }
        return count;
    }

    /** Queues out_j = x . w_j^T for w[from .. from + count), all of width cols, x [n, cols] as int8 at {@code x}. */
    void launch(CudaWeight[] w, MemorySegment[] out, int from, int count, int n, int cols,
                QuantizedActivations.Parts x, CudaStream stream) {
        putWeights(w, from, count);
        long totalRows = 0;
        for (int i = 0; i < count; i++) {
            arguments.setAtIndex(ValueLayout.ADDRESS, 2L * MAX_SHARED_WEIGHTS + i, out[from + i]);
            arguments.setAtIndex(ValueLayout.JAVA_INT, 6L * MAX_SHARED_WEIGHTS + i, w[from + i].rows());
            totalRows += w[from + i].rows();
        }
        boolean staged = variants.mmaRows() == 0 && staged(w, from, count, n, x);
        int mmaRows = variants.mmaRows() == 0 && !staged ? 32 : variants.mmaRows();
        int splits = staged && n <= QuantizedActivations.MAX_ROWS
                ? LaunchShapes.productSplits(totalRows, cols, multiprocessors, variants.productSplits()) : 1;
        if (staged) {
            stagedLaunches++;
        }
        MemorySegment sums = MemorySegment.NULL;
        MemorySegment splitCounters = MemorySegment.NULL;
        if (splits > 1) {
            sums = splitSums((long) splits * n * totalRows * Float.BYTES);
            splitCounters = counters((int) Math.ceilDiv(totalRows, LaunchShapes.STAGED_ROWS), stream);
        }
        cuda.call("zse_cuda_integer_matvec", w[from].type().code(), w[from].groupSize(), cols, count, arguments,
                arguments.asSlice(POINTERS), arguments.asSlice(3 * POINTERS), arguments.asSlice(2 * POINTERS),
                x.codes(), x.scales(), x.sums(), n, mmaRows, splits, sums, splitCounters,
                variants.rowWarps(), stream.handle());
    }

    /**
     * Whether w[from .. from + count) times n activation rows at {@code x} run as staged tensor-core products: 9 rows
     * or more, weights the staged kernel takes, and the activations aligned for its 16-byte copies.
     */
    private static boolean staged(CudaWeight[] w, int from, int count, int n, QuantizedActivations.Parts x) {
        boolean fits = n > 8 && aligned(x.codes()) && aligned(x.scales()) && aligned(x.sums());
        for (int i = from; i < from + count; i++) {
            fits &= stages(w[i]);
        }
        return fits;
    }

    /** Whether the staged kernel takes w: whole stages of columns (Q6_K: runs of 8), aligned for 16-byte copies. */
    private static boolean stages(CudaWeight w) {
        return w.cols() % LaunchShapes.stagedColumns(w.type()) == 0 && aligned(w.data()) && aligned(w.scales());
    }

    private static boolean aligned(MemorySegment at) {
        return at.address() % 16 == 0;
    }

    /** {@code bytes} of the split products' workspace (the buffer grows where a launch needs more). */
    private MemorySegment splitSums(long bytes) {
        if (splitSums == null || splitSums.bytes() < bytes) {
            if (splitSums != null) {
                splitSums.close();
                splitSums = null; // not kept closed where the larger one cannot be had
            }
            splitSums = new DeviceBuffer(cuda, bytes);
        }
        return splitSums.at(0, bytes);
    }

    /**
     * Whether gate and up times n activation rows run as one launch that applies SwiGLU as the products finish
     * ({@link #launchSwiglu}): integer products of one type, group and shape, at most {@value #FUSED_SWIGLU_ROWS}
     * rows, whose output rows are whole blocks of 32 that the scratch can take.
     */
    boolean fusesSwiglu(CudaWeight gate, CudaWeight up, int n) {
        return variants.fusedSwiglu() && n <= FUSED_SWIGLU_ROWS && takes(gate, n) && up.type() == gate.type()
                && up.groupSize() == gate.groupSize() && up.rows() == gate.rows() && up.cols() == gate.cols()
                && quantizable(n, (long) n * gate.rows(), gate.rows());
    }

    /**
     * Queues out[n, ff] = silu(x . gate^T) * (x . up^T) and its int8 form, which it returns (for {@link #wrote}); x
     * [n, cols] as int8 at {@code x}, or (one row, x null) normed from {@code norm} (else {@link NormSource#NONE}).
     * Only where {@link #fusesSwiglu}.
     */
    QuantizedActivations.Parts launchSwiglu(CudaWeight gate, CudaWeight up, int n, QuantizedActivations.Parts x,
                                            NormSource norm, MemorySegment out, CudaStream stream) {
        int ff = gate.rows();
        QuantizedActivations.Parts act = swigluScratch.parts((long) n * ff, widestCols);
        cuda.call("zse_cuda_swiglu_matvec", gate.type().code(), gate.groupSize(), gate.cols(), ff, gate.data(),
                gate.scales(), up.data(), up.scales(), codes(x), scales(x), sums(x), n, out, act.codes(),
                act.scales(), act.sums(), norm.stream(), norm.weight(), norm.eps(), norm.out(), variants.rowWarps(),
                variants.swigluAhead(), stream.handle());
        return act;
    }

    /**
     * Whether one activation row times w runs as one launch that adds its outputs to the residual stream and norms
     * it ({@link #launchAddRmsNorm}), the norm {@code dim} wide.
     */
    boolean fusesNorm(CudaWeight w, int dim) {
        return variants.norm() != NormPlacement.SEPARATE && takes(w, 1) && w.rows() == dim
                && quantizable(1, dim, dim);
    }

    /**
     * Whether the norm after a fused one-row projection ({@link #fusesNorm}) is left to the products that read its
     * output: the projection then only adds ({@link #launchAdd}), and those products norm the stream themselves (a
     * {@link NormSource}) where {@link #normsItsInput} says they can.
     */
    boolean defersNorm() {
        return variants.norm() == NormPlacement.CONSUMER;
    }

    /** Whether a fused launch on weights of {@code cols} columns may norm its own input (zse_cuda.h's limit). */
    static boolean normsItsInput(int cols) {
        return cols % QuantizedActivations.BLOCK == 0 && cols <= MAX_NORMED_COLS;
    }

    /** The widest input a launch norms itself (its int8 form in the blocks' shared memory). */
    static final int MAX_NORMED_COLS = 32768;

    /**
     * The input of a fused one-row launch as the RMSNorm of the residual stream ({@code stream}, norm weight and eps),
     * which each block computes for itself; {@code out}: where the normed row is written in F32 (the output the
     * deferred norm would have written).
     */
    record NormSource(MemorySegment stream, MemorySegment weight, float eps, MemorySegment out) {
        /** No norm: the launch's input is quantized already. */
        static final NormSource NONE = new NormSource(MemorySegment.NULL, MemorySegment.NULL, 0f, MemorySegment.NULL);
    }

    /** Queues stream += x . w^T (one row, x as int8 at {@code x}), the norm left to the products reading the stream. */
    void launchAdd(CudaWeight w, QuantizedActivations.Parts x, MemorySegment stream, CudaStream on) {
        cuda.call("zse_cuda_integer_matvec_add_rms_norm", w.type().code(), w.groupSize(), w.cols(), w.rows(),
                w.data(), w.scales(), x.codes(), x.scales(), x.sums(), stream, MemorySegment.NULL, 0f,
                MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL,
                variants.rowWarps(), on.handle());
    }

    /**
     * Queues stream += x . w^T (one row), then out = rmsNorm(stream) and its int8 form, which it returns (for
     * {@link #wrote}). Only where {@link #fusesNorm}. The int8 form goes to the scratch, where x may be: the block that
     * writes it does so after every block has read x.
     */
    QuantizedActivations.Parts launchAddRmsNorm(CudaWeight w, QuantizedActivations.Parts x, MemorySegment stream,
                                                MemorySegment weight, float eps, MemorySegment out,
                                                CudaStream on) {
        QuantizedActivations.Parts normed = scratch.parts(w.rows(), widestCols);
        cuda.call("zse_cuda_integer_matvec_add_rms_norm", w.type().code(), w.groupSize(), w.cols(), w.rows(),
                w.data(), w.scales(), x.codes(), x.scales(), x.sums(), stream, weight, eps, out, normed.codes(),
                normed.scales(), normed.sums(), counters(1, on), variants.rowWarps(), on.handle());
        return normed;
    }

    /**
     * Whether one activation row times q, k and v runs as one launch that rotates the heads and writes the caches
     * ({@link #launchRopeKv}): integer weights of one type, group and width, head_dim a multiple of 8.
     */
    boolean fusesRope(CudaWeight[] qkv, int headDim) {
        return variants.fusedRope() && headDim % 8 == 0 && run(qkv, 0, 1) == qkv.length
                && takes(qkv[0], 1) && qkv[1].cols() == qkv[0].cols() && qkv[2].cols() == qkv[0].cols();
    }

    /**
     * Queues q, k, v = x . w^T (one row, x as int8 at {@code x}, or, x null, normed from {@code norm}, else
     * {@link NormSource#NONE}), q rotated in place at {@code positions[0]}, the rotated keys and the values into the
     * caches at {@code slots[0]}. Only where {@link #fusesRope}.
     */
    void launchRopeKv(CudaWeight[] qkv, QuantizedActivations.Parts x, NormSource norm, MemorySegment[] out, int heads,
                      int kvHeads, int headDim, MemorySegment positions, MemorySegment frequencies, MemorySegment slots,
                      DeviceKvPool pool, int layer, CudaStream stream) {
        putWeights(qkv, 0, qkv.length);
        cuda.call("zse_cuda_qkv_rope_store_kv", qkv[0].type().code(), qkv[0].groupSize(), qkv[0].cols(), arguments,
                arguments.asSlice(POINTERS), heads, kvHeads, headDim, codes(x), scales(x), sums(x), out[0],
                out[1], out[2], positions, frequencies, slots, pool.keys(layer), pool.values(layer), pool.typeCode(),
                norm.stream(), norm.weight(), norm.eps(), norm.out(), variants.rowWarps(), stream.handle());
    }

    /** {@code ints} zeroed device counters (the buffer grows, zeroed on {@code stream}, where a launch needs more). */
    private MemorySegment counters(int ints, CudaStream stream) {
        long bytes = (long) ints * Integer.BYTES;
        if (counters == null || counters.bytes() < bytes) {
            if (counters != null) {
                counters.close();
                counters = null; // not kept closed where the larger one cannot be had
            }
            counters = new DeviceBuffer(cuda, bytes);
            counters.fill(0, stream);
        }
        return counters.at(0, bytes);
    }

    /** The data and scales of w[from .. from + count) into the launch's weight lists. */
    private void putWeights(CudaWeight[] w, int from, int count) {
        for (int i = 0; i < count; i++) {
            arguments.setAtIndex(ValueLayout.ADDRESS, i, w[from + i].data());
            arguments.setAtIndex(ValueLayout.ADDRESS, MAX_SHARED_WEIGHTS + i, w[from + i].scales());
        }
    }

    /** Launches of the staged tensor-core products so far (tests: which kernel ran). */
    long stagedLaunches() {
        return stagedLaunches;
    }

    /** Inputs quantized by a launch of their own so far (tests: the fused ones are not). */
    long quantizations() {
        return quantizations;
    }

    @Override
    public void close() {
        Resources.closeAll(scratch, swigluScratch, promptScratch, counters, splitSums);
    }
}
