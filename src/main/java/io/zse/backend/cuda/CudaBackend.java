package io.zse.backend.cuda;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import io.zse.format.ZseTensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import static io.zse.backend.cuda.QuantizedActivations.codes;
import static io.zse.backend.cuda.QuantizedActivations.scales;
import static io.zse.backend.cuda.QuantizedActivations.sums;

/**
 * The CUDA backend: weights live on the device in their .zse layout and every op runs as a libzse_cuda kernel.
 *
 * <p>Activations stay on the device ({@link DeviceActivations}); model vectors (norms, biases, RoPE frequencies) are
 * uploaded once. Keys and values live in a device copy of each {@link KvBlockPool} ({@link DeviceKvPool}) with the
 * host's block numbering: the host keeps the block tables and the prefix cache, the device the rows, written and read
 * by paged kernels through the tables uploaded once per forward pass ({@link BatchTables}). Per step only token ids go
 * in and the logits rows the sampler asks for come out.
 *
 * <p>Decode steps are recorded as CUDA graphs ({@link #pass}): one per program (the model's workspace), batch-size
 * bucket (1, 2, 4, ... {@value #MAX_RECORDED_ROWS}; smaller batches are padded) and flash-decoding split count. A
 * step's token ids, positions, slots and block tables go to the device in one copy, into a buffer the graph reads in
 * place, and the graph replays with one launch. A pass is recorded the second time its key is seen with no device
 * memory allocated or freed since the first (which ran the ops directly and allocated what they need, since nothing
 * may be allocated while a stream is captured); any allocation or free drops the recorded graphs, whose addresses may
 * no longer hold.
 *
 * <p>Not thread-safe: like the CPU backend's callers, one engine thread drives it.
 */
public final class CudaBackend implements Backend {
    private static final Cleaner CLEANER = Cleaner.create();
    /** The largest batch recorded as a graph; larger batches run op by op. */
    static final int MAX_RECORDED_ROWS = 256;
    /** Recorded graphs kept before all are dropped (each holds its kernels' arguments in host and device memory). */
    private static final int MAX_GRAPHS = 64;

    private final CudaLibrary cuda;
    private final CudaDevice device;
    private final CudaStream stream;
    private final WeightUploader uploader;
    private final List<StagedBuffer> slots = new ArrayList<>();
    private final Map<MappedTensor, CudaWeight> weightsByTensor = new HashMap<>();
    private final Map<MappedTensor, WeightSlot> weightSlots = new HashMap<>(); // expected, not yet asked for
    private final List<DeviceBuffer> weightMemory = new ArrayList<>(); // the expected weights' allocations
    /** ZSE_CUDA_WEIGHT_MEMORY: whether the expected weights take one allocation (one) or one each (each). */
    private boolean oneWeightAllocation = oneWeightAllocationSetting(System.getenv("ZSE_CUDA_WEIGHT_MEMORY"));
    private final Set<CudaWeight> weights = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<KvBlockPool, DeviceKvPool> kvPools = new WeakHashMap<>();
    private final Map<float[], DeviceBuffer> vectors = new IdentityHashMap<>();
    private final Queue<DeviceKvPool> abandonedKvPools = new ConcurrentLinkedQueue<>();
    private BatchLayout tablesFor;  // the layout whose tables are on the device now
    private BatchTables batchTables;
    private MemorySegment tablesAddress;
    private final Map<CudaWeight, List<WeightUploader.Upload>> landing = new IdentityHashMap<>(); // not yet waited on
    private final DeviceDeinterleave deinterleave;     // interleaved-16 weights still to rewrite in row-groups
    private volatile String awaitedWeight;             // the weight the compute stream was last ordered after
    private boolean closed;
    private final boolean graphs;
    private final Map<GraphKey, Recorded> recorded = new HashMap<>();
    private final Set<GraphKey> seen = new HashSet<>(); // run once directly at the current memory generation
    private long memoryGeneration = -1;                 // DeviceBuffer.changes() the recorded graphs were made at
    private Pass pass;                                  // the pass running now, or null
    private final StagedBuffer passInputs;              // [tokens | BatchTables.ints] of the pass, read in place
    private DeviceBuffer splitWorkspace;                // flash-decoding's merge counters and partial results
    private final IntegerProducts integer;              // Q8/Q4/K-quant products on int8 activations
    /**
     * ZSE_CUDA_OVERLAP=off launches every kernel after the one before it has finished, to compare with the default on a
     * GPU: on, the decode path's kernels start while the one ahead of them drains (zse_cuda_set_overlap; for the
     * whole process, as the library's setting is).
     */
    static boolean overlapSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_OVERLAP", value, "on", "on", "off").equals("on");
    }

    /**
     * ZSE_CUDA_WEIGHT_MEMORY=one takes the device memory of every weight {@link #expectWeights} lists in one
     * allocation, to compare with the default, one allocation a tensor, on a GPU: the tensors are allocated on the
     * thread that asks for them, in the order the lanes upload them, so a slow allocation would pace the upload.
     */
    static boolean oneWeightAllocationSetting(String value) {
        return BenchmarkSwitch.choice("ZSE_CUDA_WEIGHT_MEMORY", value, "each", "each", "one").equals("one");
    }

    /** ZSE_CUDA_PREFILL_TILE=64 or 128 fixes the prefill tiles, to compare them (bench/gpu.sh); 0: by shape. */
    private final int fixedPrefillTile = LaunchShapes.prefillTileSetting(System.getenv("ZSE_CUDA_PREFILL_TILE"));
    /** ZSE_CUDA_ATTENTION_KEYS: the keys each warp of the decode attention loads together (LaunchShapes). */
    private int keysAtOnce = LaunchShapes.keysAtOnceSetting(System.getenv("ZSE_CUDA_ATTENTION_KEYS"));
    private DeviceBuffer sampling;                      // [parameters | ids | scratch] of sample()
    private PinnedBuffer samplingStaging;
    private long replays;
    private long drawnRows;
    private long allocateNanos;                         // in weight(), allocating device memory (bench)
    private DeferredNorm deferredNorm;                  // the last op's norm, left to the next op's products
    private long normsTaken;                            // deferred norms the products computed themselves (tests)

    /** A backend that records decode steps as CUDA graphs. */
    public CudaBackend(CudaLibrary cuda, CudaDevice device) {
        this(cuda, device, true);
    }

    /** With {@code graphs} false every pass runs op by op (what the graph replays are checked against). */
    public CudaBackend(CudaLibrary cuda, CudaDevice device, boolean graphs) {
        this(cuda, device, graphs, true, null);
    }

    /**
     * With {@code integerProducts} false every product takes F32 activations (the float kernels; what comparisons with
     * a float reference need), not the int8 ones of the integer products.
     */
    public CudaBackend(CudaLibrary cuda, CudaDevice device, boolean graphs, boolean integerProducts) {
        this(cuda, device, graphs, integerProducts, null);
    }

    /** With {@code pacedUploads} non-null, the upload thread takes one permit per tensor copy (tests). */
    CudaBackend(CudaLibrary cuda, CudaDevice device, boolean graphs, boolean integerProducts,
                java.util.concurrent.Semaphore pacedUploads) {
        this(cuda, device, graphs, integerProducts, pacedUploads, IntegerProducts.Variants.fromEnvironment());
    }

    /** {@code variants}: the integer products' kernel variants, where fixed (IntegerProducts). */
    CudaBackend(CudaLibrary cuda, CudaDevice device, boolean graphs, boolean integerProducts,
                java.util.concurrent.Semaphore pacedUploads, IntegerProducts.Variants variants) {
        this(cuda, device, graphs, integerProducts, pacedUploads, variants, UploadSettings.fromEnvironment());
    }

    /** {@code upload}: how the weights go to the device, where fixed (WeightUploader). */
    CudaBackend(CudaLibrary cuda, CudaDevice device, boolean graphs, boolean integerProducts,
                java.util.concurrent.Semaphore pacedUploads, IntegerProducts.Variants variants,
                UploadSettings upload) {
        this.cuda = cuda;
        this.device = device;
        this.graphs = graphs;
        this.passInputs = new StagedBuffer(cuda);
        this.deinterleave = new DeviceDeinterleave(cuda);
        this.integer = new IntegerProducts(cuda, integerProducts, variants, device.multiprocessors());
        cuda.setDevice(device.index());
        cuda.call("zse_cuda_set_overlap", overlapSetting(System.getenv("ZSE_CUDA_OVERLAP")) ? 1 : 0);
        this.stream = new CudaStream(cuda);
        this.uploader = Resources.madeAfter(stream, () -> new WeightUploader(cuda, device.index(), upload,
                pacedUploads));
    }

    public CudaDevice device() {
        return device;
    }

    /**
     * When the weights queued so far had all been copied out of the mapping and their copies queued
     * (System.nanoTime()), one chunk's transfer before the last lands; empty while some are still being copied.
     */
    public OptionalLong weightsIssuedAt() {
        return uploader.allIssuedAt();
    }

    /** How the weights go to the device, and where the upload's time went so far (bench). */
    public String describeUpload() {
        return uploader.describe() + String.format("; allocating the weights' device memory %.1f ms",
                allocateNanos / 1e6);
    }

    /** Bytes of weights copied to the device so far. */
    public long uploadedBytes() {
        return uploader.bytesUploaded();
    }

    /**
     * Waits until every weight upload has landed. Ops need not: each waits on the device for the weights it reads
     * only; benchmarks call this to time the upload.
     */
    public void finishUploads() {
        enter();
        uploader.finish();
        landing.clear();
        rewriteInterleaved();
    }

    /** Once every copy has landed: the pending interleaved weights rewritten, and their scratch freed. */
    private void rewriteInterleaved() {
        deinterleave.runAll(stream);
        deinterleave.release(stream);
    }

    /** How many product inputs were quantized by a launch of their own (tests: the fused ones are not). */
    long quantizations() {
        return integer.quantizations();
    }

    /** Deferred norms the next op's products computed themselves so far (tests). */
    long normsTakenByProducts() {
        return normsTaken;
    }

    /** Launches of the staged tensor-core products so far (tests). */
    long stagedLaunches() {
        return integer.stagedLaunches();
    }

    /** Fixes the keys a warp of the decode attention loads together, 0 (by head size) or 1, before any pass (tests). */
    void fixAttentionKeys(int keys) {
        check(keys == 0 || keys == 1, "keys at once of 0 or 1");
        keysAtOnce = keys;
    }

    /** Layer {@code layer}'s keys (or values) of the pool's device copy as stored, INT8 scales included (tests). */
    MemorySegment storedKvRows(KvBlockPool pool, int layer, boolean keys, Arena arena) {
        enterDevice();
        return devicePool(pool).copyOut(layer, keys, arena, stream);
    }

    /** Fixes whether {@link #expectWeights} takes the weights' memory in one allocation (tests). */
    void fixWeightMemory(boolean one) {
        oneWeightAllocation = one;
    }

    /** Device copies of KV pools held now (tests). */
    int devicePools() {
        return kvPools.size();
    }

    /** The name of the weight the compute stream was last made to wait for (tests watch the upload order). */
    String awaitedWeight() {
        return awaitedWeight;
    }

    /**
     * With ZSE_CUDA_WEIGHT_MEMORY=one, allocates the device memory of every listed tensor not uploaded yet as one
     * buffer, a 256-byte aligned slot each (tied tensors once), which {@link #weight} fills rather than allocating.
     */
    @Override
    public void expectWeights(List<ZseTensor> tensors) {
        enterDevice();
        if (!oneWeightAllocation) {
            return;
        }
        Map<MappedTensor, Long> bases = new java.util.LinkedHashMap<>();
        long total = 0;
        for (ZseTensor t : tensors) {
            MappedTensor key = MappedTensor.of(t);
            if (!weightsByTensor.containsKey(key) && !weightSlots.containsKey(key) && !bases.containsKey(key)) {
                bases.put(key, total);
                total = CudaWeight.scalesOffset(total + CudaWeight.deviceBytes(t.data().byteSize(),
                        t.scales().byteSize()));
            }
        }
        if (total == 0) {
            return;
        }
        long t0 = System.nanoTime();
        DeviceBuffer memory = new DeviceBuffer(cuda, total);
        allocateNanos += System.nanoTime() - t0;
        weightMemory.add(memory);
        bases.forEach((key, base) -> weightSlots.put(key, new WeightSlot(memory, base, true)));
    }

    /** Where a weight goes: {@code base} bytes into its own allocation or (shared) one of the expected weights'. */
    private record WeightSlot(DeviceBuffer memory, long base, boolean shared) {
    }

    @Override
    public WeightMatrix weight(ZseTensor tensor) {
        enter();
        // Interleaved-16 weights are uploaded as stored and rewritten in row-groups on the device (DeviceDeinterleave).
        boolean interleaved = tensor.info().layout() != ZseLayout.LAYOUT_ROW_GROUPS;
        long[] shape = tensor.shape();
        if (shape.length != 2 || shape[0] > Integer.MAX_VALUE || shape[1] > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(tensor.name() + ": a weight matrix must be 2-D [out, in], not "
                    + tensor.info().shapeString());
        }
        int rows = (int) shape[0];
        int cols = (int) shape[1];
        if (tensor.type().isQuantized() && cols % tensor.groupSize() != 0) {
            throw new IllegalArgumentException(tensor.name() + ": row length " + cols
                    + " is not a multiple of the group size " + tensor.groupSize());
        }
        long count = (long) rows * cols;
        long dataBytes = tensor.type().dataBytes(count);
        long scaleBytes = tensor.type().scaleBytes(count, tensor.groupSize());
        if (tensor.data().byteSize() != dataBytes || tensor.scales().byteSize() != scaleBytes) {
            throw new IllegalArgumentException(tensor.name() + ": " + tensor.data().byteSize() + " data and "
                    + tensor.scales().byteSize() + " scale bytes, expected " + dataBytes + " and " + scaleBytes);
        }
        // Tied embeddings: the same tensor is both the embedding table and the output projection; upload it once.
        // Known by its mapping too: a file opened after another was closed can be mapped at the same address.
        MappedTensor key = MappedTensor.of(tensor);
        CudaWeight known = weightsByTensor.get(key);
        if (known != null) {
            return known;
        }
        WeightSlot slot = weightSlots.remove(key);
        if (slot == null) {
            long t0 = System.nanoTime();
            slot = new WeightSlot(new DeviceBuffer(cuda, CudaWeight.deviceBytes(dataBytes, scaleBytes)), 0, false);
            allocateNanos += System.nanoTime() - t0;
        }
        DeviceBuffer memory = slot.memory();
        CudaWeight w = new CudaWeight(tensor.name(), tensor.type(), tensor.groupSize(), rows, cols, memory,
                slot.base(), slot.shared(), dataBytes, scaleBytes);
        weightsByTensor.put(key, w);
        weights.add(w);
        integer.register(w);
        List<WeightUploader.Upload> copies = new ArrayList<>(2);
        copies.add(uploader.upload(tensor.name(), tensor.data(), tensor.file(), tensor.info().dataOffset(), memory,
                slot.base()));
        if (scaleBytes > 0) {
            copies.add(uploader.upload(tensor.name() + " scales", tensor.scales(), tensor.file(),
                    tensor.info().scalesOffset(), memory, slot.base() + CudaWeight.scalesOffset(dataBytes)));
        }
        landing.put(w, copies);
        if (interleaved) {
            deinterleave.add(w);
        }
        return w;
    }

    /** A tensor's bytes in one mapping of a file. */
    private record MappedTensor(MemorySegment.Scope mapping, long address, long bytes) {
        static MappedTensor of(ZseTensor tensor) {
            return new MappedTensor(tensor.data().scope(), tensor.data().address(), tensor.data().byteSize());
        }
    }

    @Override
    public ActivationBuffer allocate(long floats) {
        check(floats >= 0, "a negative size");
        enter();
        return new DeviceActivations(cuda, floats);
    }

    @Override
    public void write(float[] values, ActivationBuffer into) {
        DeviceActivations target = own(into, values.length);
        computeEnter();
        MemorySegment staged = slot(0).upload(values, 0, values.length, stream);
        cuda.call("zse_cuda_copy_on_device", target.at(0, values.length), staged, (long) values.length * Float.BYTES,
                stream.handle());
    }

    @Override
    public void read(ActivationBuffer from, float[] into, int count) {
        DeviceActivations source = own(from, count);
        computeEnter();
        long bytes = (long) count * Float.BYTES;
        slot(0).device(bytes).copyFrom(source.buffer, 0, 0, bytes, stream);
        slot(0).download(into, count, stream);
    }

    /** The rows gathered on the device, then one copy back. */
    @Override
    public void readRows(ActivationBuffer from, int[] rows, int width, float[] into) {
        DeviceActivations source = own(from, 0);
        check(width > 0, "width must be positive");
        checkLength("into", into, (long) rows.length * width);
        if (rows.length == 0) {
            return;
        }
        computeEnter();
        long bytes = (long) width * Float.BYTES;
        DeviceBuffer gathered = slot(0).device(rows.length * bytes);
        for (int i = 0; i < rows.length; i++) {
            check(rows[i] >= 0 && (long) (rows[i] + 1) * width <= source.capacity(), "row " + rows[i] + " outside");
            gathered.copyFrom(source.buffer, rows[i] * bytes, i * bytes, bytes, stream);
        }
        slot(0).download(into, rows.length * width, stream);
    }

    @Override
    public void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into) {
        DeviceActivations source = own(from, 0);
        DeviceActivations target = own(into, (long) rows.length * width);
        computeEnter();
        long bytes = (long) width * Float.BYTES;
        for (int i = 0; i < rows.length; i++) {
            check(rows[i] >= 0 && (long) (rows[i] + 1) * width <= source.capacity(), "row " + rows[i] + " outside");
            target.buffer.copyFrom(source.buffer, rows[i] * bytes, i * bytes, bytes, stream);
        }
    }

    @Override
    public void matmul(ActivationBuffer x, int n, WeightMatrix weight, ActivationBuffer out) {
        matmuls(x, n, new WeightMatrix[] {weight}, new ActivationBuffer[] {out});
    }

    /**
     * Products that share their input. Q8, Q4, Q4_K and Q6_K weights at up to 64 rows, and prompts of those the staged
     * products take, run as integer products ({@link IntegerProducts}): the input in int8 once, and weights of one
     * type and group (q, k and v; gate and up) in one launch.
     */
    @Override
    public void matmuls(ActivationBuffer x, int n, WeightMatrix[] ws, ActivationBuffer[] outs) {
        check(ws.length == outs.length && ws.length > 0, "one output per weight");
        check(n > 0, "n must be positive");
        CudaWeight[] w = new CudaWeight[ws.length];
        MemorySegment[] out = new MemorySegment[ws.length];
        int cols = own(ws[0]).cols();
        for (int j = 0; j < ws.length; j++) {
            w[j] = own(ws[j]);
            check(w[j].cols() == cols, "weights sharing an input differ in width: " + w[j].cols() + " and " + cols);
            out[j] = own(outs[j], (long) n * w[j].rows()).at(0, (long) n * w[j].rows());
        }
        DeviceActivations input = own(x, (long) n * cols);
        computeEnter();
        for (CudaWeight each : w) {
            ready(each);
        }
        MemorySegment in = input.at(0, (long) n * cols);
        QuantizedActivations.Parts int8 = null;
        for (int j = 0; j < w.length; ) {
            if (!integer.takes(w[j], n)) {
                int tile = fixedPrefillTile != 0 ? fixedPrefillTile
                        : LaunchShapes.prefillTile(w[j].rows(), n, device.multiprocessors());
                cuda.call("zse_cuda_matmul", w[j].data(), w[j].scales(), w[j].type().code(), w[j].groupSize(),
                        w[j].rows(), cols, in, n, tile, out[j], stream.handle());
                j++;
                continue;
            }
            int8 = int8 != null ? int8 : integer.input(input, in, n, cols, stream);
            int count = integer.run(w, j, n);
            integer.launch(w, out, j, count, n, cols, int8, stream);
            j += count;
        }
    }

    @Override
    public void addBias(ActivationBuffer x, int n, float[] bias) {
        check(n > 0 && bias.length > 0, "n and the bias length must be positive");
        DeviceActivations rows = own(x, (long) n * bias.length);
        computeEnter();
        cuda.call("zse_cuda_add_bias", rows.at(0, (long) n * bias.length), n, vector(bias), bias.length,
                stream.handle());
    }

    @Override
    public void rmsNorm(ActivationBuffer x, int n, float[] weight, float eps, ActivationBuffer out) {
        int dim = weight.length;
        check(n > 0 && dim > 0, "n and the weight length must be positive");
        DeviceActivations in = own(x, (long) n * dim);
        DeviceActivations o = own(out, (long) n * dim);
        computeEnter();
        launchRmsNorm(in.at(0, (long) n * dim), n, vector(weight), dim, eps, o);
    }

    /** out = rms_norm(x) * weight for n rows of dim, with its int8 form for the next product where it takes one. */
    private void launchRmsNorm(MemorySegment x, int n, MemorySegment weight, int dim, float eps,
                               DeviceActivations out) {
        QuantizedActivations.Parts q = integer.outputFor(n, (long) n * dim, dim);
        cuda.call("zse_cuda_rms_norm", x, n, weight, dim, eps, out.at(0, (long) n * dim), codes(q), scales(q), sums(q),
                stream.handle());
        integer.wrote(out, (long) n * dim, q);
    }

    /** One pass over each row: the add, the sum of squares and the normed row (zse_cuda_add_rms_norm). */
    @Override
    public void addRmsNorm(ActivationBuffer x, ActivationBuffer y, int n, float[] weight, float eps,
                           ActivationBuffer out) {
        int dim = weight.length;
        check(n > 0 && dim > 0, "n and the weight length must be positive");
        DeviceActivations residual = own(x, (long) n * dim);
        DeviceActivations added = own(y, (long) n * dim);
        DeviceActivations o = own(out, (long) n * dim);
        computeEnter();
        QuantizedActivations.Parts q = integer.outputFor(n, (long) n * dim, dim);
        cuda.call("zse_cuda_add_rms_norm", residual.at(0, (long) n * dim), added.at(0, (long) n * dim), n,
                vector(weight), dim, eps, o.at(0, (long) n * dim), codes(q), scales(q), sums(q), stream.handle());
        integer.wrote(o, (long) n * dim, q);
    }

    /** One launch for the whole batch: each row's position comes from the batch's tables on the device. */
    @Override
    public void rope(ActivationBuffer x, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
                     float[] inverseFrequencies) {
        check(heads > 0 && headDim > 0 && headDim % 2 == 0, "heads and an even headDim must be positive");
        check(inverseFrequencies.length >= headDim / 2, "need headDim / 2 inverse frequencies");
        check(0 <= fromRow && fromRow < toRow && toRow <= batch.rows(), "rows " + fromRow + ".." + toRow
                + " of a batch of " + batch.rows());
        int width = Math.multiplyExact(heads, headDim);
        computeEnter();
        Tables t = tables(batch);
        DeviceActivations rows = own(x, (long) t.rows() * width);
        // The whole batch is the table's rows, padding included: a recorded pass replays this launch at any fill.
        int count = fromRow == 0 && toRow == batch.rows() ? t.rows() : toRow - fromRow;
        cuda.call("zse_cuda_rope", rows.at((long) fromRow * width, (long) count * width), count, heads, headDim,
                t.layout().positions(t.address(), fromRow), vector(inverseFrequencies), stream.handle());
    }

    /** The new rows go straight from the activations into the device block pool: nothing crosses to the host. */
    @Override
    public void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer) {
        int kvDim = batch.segments().getFirst().cache().kvDim();
        for (BatchLayout.Segment s : batch.segments()) {
            check(s.cache().kvDim() == kvDim, "the batch's caches differ in kv dim");
            s.cache().checkWritable(layer, s.startPos(), s.length());
        }
        computeEnter();
        Tables t = tables(batch);
        DeviceActivations keys = own(k, (long) t.rows() * kvDim);
        DeviceActivations values = own(v, (long) t.rows() * kvDim);
        for (BatchTables.Group g : t.layout().groups()) {
            DeviceKvPool pool = devicePool(g.pool());
            int kvHeads = g.pool().numKvHeads();
            cuda.call("zse_cuda_store_kv", keys.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim),
                    values.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim), g.rowCount(), kvHeads,
                    kvDim / kvHeads, t.layout().slots(t.address(), g.rowStart()), pool.keys(layer),
                    pool.values(layer), pool.keyScales(layer), pool.valueScales(layer), pool.typeCode(),
                    stream.handle());
        }
    }

    /**
     * The keys rotated on their way from the activations into the device block pool (zse_cuda_rope_store_kv): one
     * launch per pool instead of a rope and a store; k keeps its unrotated rows.
     */
    @Override
    public void ropeStoreKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int kvHeads,
                            int headDim, float[] inverseFrequencies) {
        ropeStoreKv(null, 0, k, v, batch, layer, kvHeads, headDim, inverseFrequencies);
    }

    /** The queries rotated by the launch that writes the keys: one launch per pool instead of two. */
    @Override
    public void ropeQueriesAndStoreKv(ActivationBuffer q, int heads, ActivationBuffer k, ActivationBuffer v,
                                      BatchLayout batch, int layer, int kvHeads, int headDim,
                                      float[] inverseFrequencies) {
        check(heads > 0, "heads must be positive");
        ropeStoreKv(q, heads, k, v, batch, layer, kvHeads, headDim, inverseFrequencies);
    }

    /** ropeStoreKv, rotating the rows of q in place too where q is not null. */
    private void ropeStoreKv(ActivationBuffer q, int heads, ActivationBuffer k, ActivationBuffer v, BatchLayout batch,
                             int layer, int kvHeads, int headDim, float[] inverseFrequencies) {
        check(kvHeads > 0 && headDim > 0 && headDim % 2 == 0, "kv heads and an even headDim must be positive");
        check(inverseFrequencies.length >= headDim / 2, "need headDim / 2 inverse frequencies");
        int kvDim = Math.multiplyExact(kvHeads, headDim);
        checkWritable(batch, layer, kvHeads, kvDim);
        computeEnter();
        Tables t = tables(batch);
        DeviceActivations keys = own(k, (long) t.rows() * kvDim);
        DeviceActivations values = own(v, (long) t.rows() * kvDim);
        int queryDim = Math.multiplyExact(heads, headDim);
        // the groups cover every row of the tables, padding included, as rope does
        DeviceActivations queries = q == null ? null : own(q, (long) t.rows() * queryDim);
        MemorySegment frequencies = vector(inverseFrequencies);
        for (BatchTables.Group g : t.layout().groups()) {
            DeviceKvPool pool = devicePool(g.pool());
            MemorySegment groupQueries = queries == null ? MemorySegment.NULL
                    : queries.at((long) g.rowStart() * queryDim, (long) g.rowCount() * queryDim);
            cuda.call("zse_cuda_rope_store_kv", groupQueries, heads,
                    keys.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim),
                    values.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim), g.rowCount(), kvHeads,
                    headDim, t.layout().positions(t.address(), g.rowStart()), frequencies,
                    t.layout().slots(t.address(), g.rowStart()), pool.keys(layer), pool.values(layer),
                    pool.keyScales(layer), pool.valueScales(layer), pool.typeCode(), stream.handle());
        }
    }

    /** One kernel launch for all rows of the batch whose caches share a pool (the server's case: all of them). */
    @Override
    public void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out) {
        check(shape.headDim() <= 256, "head dim " + shape.headDim() + " above 256 is not supported on CUDA");
        check(layer >= 0, "negative layer");
        int width = shape.queryDim();
        for (BatchLayout.Segment s : batch.segments()) {
            KvCache cache = s.cache();
            cache.pool().checkShape(shape.numKvHeads(), shape.kvDim());
            check(layer < cache.layers(), "layer " + layer + " outside the cache's " + cache.layers());
            check((long) s.end() <= cache.reservedPositions(), "positions up to " + s.end()
                    + " exceed the " + cache.reservedPositions() + " reserved positions of the KV cache");
        }
        computeEnter();
        Tables t = tables(batch);
        DeviceActivations queries = own(q, (long) t.rows() * width);
        DeviceActivations o = own(out, (long) t.rows() * width);
        // decode rows only (the tiled prompt kernel writes F32 alone): the output projection's int8 input too
        boolean decodeOnly = t.layout().groups().stream().noneMatch(BatchTables.Group::prompt);
        QuantizedActivations.Parts quantizedOut = decodeOnly && shape.headDim() % QuantizedActivations.BLOCK == 0
                ? integer.outputFor(t.rows(), (long) t.rows() * width, width) : null;
        for (BatchTables.Group g : t.layout().groups()) {
            DeviceKvPool pool = devicePool(g.pool());
            if (g.prompt()) {
                // Prompt chunks: tiles of 16 consecutive rows share their key and value loads (decode rows in the
                // group are 1-row tiles); F16 caches round K and V as the CPU's do and run on tensor cores, as do
                // INT8 ones on their codes.
                cuda.call("zse_cuda_paged_prefill_attention", queries.at(0, (long) t.rows() * width),
                        t.layout().positions(t.address(), 0), t.layout().tableOffsets(t.address(), 0),
                        t.layout().tables(t.address()), t.layout().tiles(t.address(), g.tileStart()), g.tileCount(),
                        g.pool().blockSize(), pool.keys(layer), pool.values(layer), pool.keyScales(layer),
                        pool.valueScales(layer), shape.numHeads(), shape.numKvHeads(), shape.headDim(),
                        shape.slidingWindow(), shape.scale(), shape.softCap(), pool.typeCode(),
                        o.at(0, (long) t.rows() * width), stream.handle());
                continue;
            }
            int positions = LaunchShapes.positionsClass(batch.maxEnd());
            int headsPerBlock = LaunchShapes.headsPerBlock(shape.numHeads(), shape.numKvHeads(), g.rowCount(),
                    positions, device.multiprocessors());
            int splits = LaunchShapes.splits(g.rowCount(), shape.numHeads() / headsPerBlock, positions,
                    device.multiprocessors());
            MemorySegment workspace = MemorySegment.NULL;
            if (splits > 1) {
                // the merge's counters (zero between launches), then the partial states
                long bytes = LaunchShapes.SPLIT_COUNTERS * Integer.BYTES
                        + (long) g.rowCount() * shape.numHeads() * splits * (shape.headDim() + 2) * Float.BYTES;
                if (splitWorkspace == null || splitWorkspace.bytes() < bytes) {
                    if (splitWorkspace != null) {
                        splitWorkspace.close();
                        splitWorkspace = null;
                    }
                    splitWorkspace = new DeviceBuffer(cuda, bytes);
                    splitWorkspace.fill(0, stream);
                }
                workspace = splitWorkspace.at(0, bytes);
            }
            long first = (long) g.rowStart() * width; // the group's first output value
            cuda.call("zse_cuda_paged_attention", queries.at(first, (long) g.rowCount() * width),
                    g.rowCount(), t.layout().positions(t.address(), g.rowStart()),
                    t.layout().tableOffsets(t.address(), g.rowStart()), t.layout().tables(t.address()),
                    g.pool().blockSize(), pool.keys(layer), pool.values(layer), pool.keyScales(layer),
                    pool.valueScales(layer), pool.typeCode(), shape.numHeads(),
                    shape.numKvHeads(), shape.headDim(), shape.slidingWindow(), shape.scale(), shape.softCap(),
                    splits, headsPerBlock, keysAtOnce, workspace,
                    o.at(first, (long) g.rowCount() * width),
                    offset(codes(quantizedOut), first), offset(scales(quantizedOut), first / 8),
                    offset(sums(quantizedOut), first / 8), stream.handle());
        }
        integer.wrote(o, (long) t.rows() * width, quantizedOut);
    }

    /** The device address {@code bytes} past {@code at}; NULL stays NULL. */
    private static MemorySegment offset(MemorySegment at, long bytes) {
        return at.equals(MemorySegment.NULL) ? at : MemorySegment.ofAddress(at.address() + bytes);
    }

    /** A batch's tables on the device: the pass's (padding included) or uploaded for this batch. */
    private record Tables(BatchTables layout, MemorySegment address) {
        int rows() {
            return layout.rows();
        }
    }

    /**
     * The batch's positions, slots and block tables on the device: the running pass's, or uploaded once per batch
     * (every layer's storeKv and attention get the same layout; the block tables do not change during a pass).
     */
    private Tables tables(BatchLayout batch) {
        if (pass != null && batch == pass.batch) {
            return new Tables(pass.tables, pass.tablesAddress);
        }
        if (batch != tablesFor) {
            batchTables = BatchTables.of(batch);
            tablesAddress = slot(4).upload(batchTables.ints(), stream);
            tablesFor = batch;
        }
        return new Tables(batchTables, tablesAddress);
    }

    /** What identifies a recorded pass: the ops (program), their row count, the pool and the split count. */
    private record GraphKey(Object program, int rows, KvBlockPool pool, int positionsClass) {
    }

    /** A recorded pass and the vocabulary its embedding reads (replays check token ids against it). */
    private record Recorded(CudaGraph graph, int vocab) {
    }

    /** The pass running now: where its inputs are on the device. */
    private static final class Pass {
        final int[] tokens;
        final BatchLayout batch;
        final BatchTables tables;
        final MemorySegment tokensAddress;
        final MemorySegment tablesAddress;
        int vocab = -1; // rows of the embedding table, once the pass has embedded its tokens

        Pass(int[] tokens, BatchLayout batch, BatchTables tables, MemorySegment tokensAddress,
             MemorySegment tablesAddress) {
            this.tokens = tokens;
            this.batch = batch;
            this.tables = tables;
            this.tokensAddress = tokensAddress;
            this.tablesAddress = tablesAddress;
        }
    }

    /** Decode batches (one row per sequence, one pool, at most MAX_RECORDED_ROWS) pad to a power of two. */
    @Override
    public int passRows(BatchLayout batch) {
        return recordable(batch) ? Integer.highestOneBit(batch.rows() * 2 - 1) : batch.rows();
    }

    private boolean recordable(BatchLayout batch) {
        if (!graphs || batch.rows() > MAX_RECORDED_ROWS) {
            return false;
        }
        KvBlockPool pool = batch.segments().getFirst().cache().pool();
        for (BatchLayout.Segment s : batch.segments()) {
            if (s.length() != 1 || s.cache().pool() != pool) {
                return false;
            }
        }
        return true;
    }

    /**
     * Uploads the pass's token ids and tables in one copy, then runs the ops directly, records them, or replays their
     * recording (see the class comment).
     */
    @Override
    public void pass(Object program, int[] tokens, BatchLayout batch, Runnable ops) {
        check(tokens.length >= batch.rows(), tokens.length + " tokens for a batch of " + batch.rows() + " rows");
        computeEnter();
        closeAbandonedKvPools();
        for (BatchLayout.Segment s : batch.segments()) {
            s.cache().checkWritable(0, s.startPos(), s.length()); // what storeKv checks, for replays that skip it
        }
        BatchTables tables = BatchTables.of(batch, tokens.length);
        MemorySegment inputs = uploadPassInputs(tokens, tables.ints());
        pass = new Pass(tokens, batch, tables, inputs,
                MemorySegment.ofAddress(inputs.address() + (long) tokens.length * Integer.BYTES));
        // a norm the last op left runs inside the pass, so a recording holds it
        Runnable steps = () -> {
            ops.run();
            if (deferredNorm != null) {
                runDeferredNorm();
            }
        };
        try {
            boolean record = recordable(batch) && tokens.length == passRows(batch) && uploadsLanded();
            if (!record) {
                steps.run();
                return;
            }
            if (memoryGeneration != DeviceBuffer.changes()) {
                dropGraphs();
                memoryGeneration = DeviceBuffer.changes();
            }
            GraphKey key = new GraphKey(program, tokens.length, batch.segments().getFirst().cache().pool(),
                    LaunchShapes.positionsClass(batch.maxEnd()));
            Recorded known = recorded.get(key);
            if (known != null) {
                for (int token : tokens) {
                    if (known.vocab() >= 0 && (token < 0 || token >= known.vocab())) {
                        throw new IllegalArgumentException("token id " + token + " outside the vocabulary 0.."
                                + (known.vocab() - 1));
                    }
                }
                known.graph().launch(stream);
                replays++;
            } else if (seen.add(key)) {
                steps.run(); // allocates what the ops need; recorded next time if nothing else was allocated meanwhile
                if (memoryGeneration != DeviceBuffer.changes()) {
                    dropGraphs();
                    memoryGeneration = DeviceBuffer.changes();
                    seen.add(key);
                }
            } else {
                if (recorded.size() >= MAX_GRAPHS) {
                    dropGraphs();
                    seen.add(key);
                }
                CudaGraph graph;
                try {
                    graph = CudaGraph.capture(cuda, stream, steps);
                } catch (CudaException e) {
                    // Something the ops did cannot be captured (CUDA refuses it while capturing): run them directly.
                    dropGraphs();
                    steps.run();
                    return;
                }
                recorded.put(key, new Recorded(graph, pass.vocab));
                graph.launch(stream);
            }
        } finally {
            pass = null;
        }
    }

    /** How many rows {@link #sample} drew on the device so far (not those it handed back to the host). */
    public long drawnRows() {
        return drawnRows;
    }

    /**
     * Whether no op will wait for a weight upload any more: nothing may be recorded before (a recording would wait on
     * events of streams outside it). Once the upload thread has issued everything, waits here for it to land.
     */
    private boolean uploadsLanded() {
        if (!landing.isEmpty() && uploader.issuedAll()) {
            uploader.finish();
            landing.clear();
            rewriteInterleaved();
        }
        return landing.isEmpty();
    }

    /** How many passes ran as replays of a recorded graph so far. */
    public long replayedPasses() {
        return replays;
    }

    private void dropGraphs() {
        recorded.values().forEach(r -> r.graph().close());
        recorded.clear();
        seen.clear();
    }

    /** [tokens | tables] into the pass input buffer (at least 64 KiB, so it rarely moves). */
    private MemorySegment uploadPassInputs(int[] tokens, int[] tables) {
        int[] inputs = Arrays.copyOf(tokens, tokens.length + tables.length);
        System.arraycopy(tables, 0, inputs, tokens.length, tables.length);
        return passInputs.upload(inputs, stream);
    }

    @Override
    public void swiglu(ActivationBuffer gate, ActivationBuffer up, int length) {
        check(length > 0, "length must be positive");
        DeviceActivations g = own(gate, length);
        DeviceActivations u = own(up, length);
        computeEnter();
        // the rows' count is not known here: outputFor bounds the length by what the integer products can take
        QuantizedActivations.Parts q = integer.outputFor(1, length, length);
        cuda.call("zse_cuda_swiglu", g.at(0, length), u.at(0, length), (long) length, codes(q), scales(q), sums(q),
                stream.handle());
        integer.wrote(g, length, q);
    }

    /**
     * One row of one sequence's pool, integer weights: one launch, whose blocks each rotate the pairs of rows of a q or
     * k head they computed and write the caches; else the products, then RoPE and the KV write.
     */
    @Override
    public void projectRopeStoreKv(ActivationBuffer x, int n, WeightMatrix[] qkv, ActivationBuffer q,
                                   ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int heads,
                                   int kvHeads, int headDim, float[] inverseFrequencies) {
        check(qkv.length == 3, "q, k and v: three weights");
        CudaWeight[] w = {own(qkv[0]), own(qkv[1]), own(qkv[2])};
        int kvDim = Math.multiplyExact(kvHeads, headDim);
        int queryDim = Math.multiplyExact(heads, headDim);
        // INT8 rows are quantized by the whole head row, which the fused launch's blocks (8 rows of a head each) lack
        boolean int8Rows = batch.segments().getFirst().cache().pool().type() == KvCacheType.INT8;
        if (n != 1 || passRows(batch) != 1 || int8Rows || !integer.fusesRope(w, headDim)
                || w[0].rows() != queryDim || w[1].rows() != kvDim || w[2].rows() != kvDim
                || inverseFrequencies.length < headDim / 2) {
            Backend.super.projectRopeStoreKv(x, n, qkv, q, k, v, batch, layer, heads, kvHeads, headDim,
                    inverseFrequencies);
            return;
        }
        checkWritable(batch, layer, kvHeads, kvDim);
        MemorySegment[] out = {own(q, queryDim).at(0, queryDim), own(k, kvDim).at(0, kvDim),
                own(v, kvDim).at(0, kvDim)};
        IntegerProducts.NormSource norm = takeDeferredNorm(x, w[0].cols());
        QuantizedActivations.Parts int8 = enterProducts(x, 1, norm, w);
        Tables t = tables(batch);
        BatchTables.Group g = t.layout().groups().getFirst();
        integer.launchRopeKv(w, int8, norm, out, heads, kvHeads, headDim,
                t.layout().positions(t.address(), g.rowStart()), vector(inverseFrequencies),
                t.layout().slots(t.address(), g.rowStart()), devicePool(g.pool()), layer, stream);
    }

    /**
     * One row of an integer weight: one launch, which adds each output to the stream and whose last block norms it
     * (projected is not written), or which only adds, the norm left to the next op's products where the variant says
     * so ({@link #takeDeferredNorm}); else the product, then the add + RMSNorm.
     */
    @Override
    public void matmulAddRmsNorm(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer projected,
                                 ActivationBuffer residualStream, float[] weight, float eps, ActivationBuffer out) {
        CudaWeight cw = own(w);
        if (n != 1 || !integer.fusesNorm(cw, weight.length)) {
            Backend.super.matmulAddRmsNorm(x, n, w, projected, residualStream, weight, eps, out);
            return;
        }
        int dim = cw.rows();
        DeviceActivations residual = own(residualStream, dim);
        DeviceActivations normed = own(out, dim);
        own(projected, dim);
        QuantizedActivations.Parts int8 = enterProducts(x, 1, IntegerProducts.NormSource.NONE, cw);
        if (integer.defersNorm()) {
            integer.launchAdd(cw, int8, residual.at(0, dim), stream);
            deferredNorm = new DeferredNorm(normed, dim, residual.at(0, dim), vector(weight), eps);
            return;
        }
        integer.wrote(normed, dim, integer.launchAddRmsNorm(cw, int8, residual.at(0, dim), vector(weight), eps,
                normed.at(0, dim), stream));
    }

    /**
     * A one-row add to the residual stream whose RMSNorm was left to the next op (IntegerProducts.NormPlacement
     * CONSUMER): the normed output's buffer and width, the stream, the norm's weight and eps. The next op takes it
     * where its fused products norm their own input ({@link #takeDeferredNorm}); any other op runs it first
     * ({@link #runDeferredNorm}), as does the end of a pass, so that a recorded pass holds it.
     */
    private record DeferredNorm(DeviceActivations out, int dim, MemorySegment stream, MemorySegment weight, float eps) {
    }

    /**
     * The norm the last op left for x's products, now theirs to compute ({@link IntegerProducts.NormSource#NONE}
     * where there is none, or it normed another buffer or width, or is too wide for them: then entering runs it).
     */
    private IntegerProducts.NormSource takeDeferredNorm(ActivationBuffer x, int cols) {
        DeferredNorm d = deferredNorm;
        if (d == null || d.out() != x || d.dim() != cols || !IntegerProducts.normsItsInput(cols)) {
            return IntegerProducts.NormSource.NONE;
        }
        deferredNorm = null;
        normsTaken++;
        return new IntegerProducts.NormSource(d.stream(), d.weight(), d.eps(), d.out().at(0, cols));
    }

    /** Runs the deferred norm as the op that left it would have, its int8 form for the next product. */
    private void runDeferredNorm() {
        DeferredNorm d = deferredNorm;
        deferredNorm = null;
        launchRmsNorm(d.stream(), 1, d.weight(), d.dim(), d.eps(), d.out());
    }

    /**
     * Up to {@value IntegerProducts#FUSED_SWIGLU_ROWS} rows of integer weights: one launch, whose blocks each apply
     * SwiGLU to the 32 gate and up sums they computed and write its int8 form for the down projection (up is not
     * written); else the products, then SwiGLU.
     */
    @Override
    public void swigluProducts(ActivationBuffer x, int n, WeightMatrix gateWeight, WeightMatrix upWeight,
                               ActivationBuffer gate, ActivationBuffer up) {
        CudaWeight g = own(gateWeight);
        CudaWeight u = own(upWeight);
        if (n <= 0 || !integer.fusesSwiglu(g, u, n)) {
            Backend.super.swigluProducts(x, n, gateWeight, upWeight, gate, up);
            return;
        }
        long values = (long) n * g.rows();
        DeviceActivations out = own(gate, values);
        own(up, values);
        IntegerProducts.NormSource norm = n == 1 ? takeDeferredNorm(x, g.cols()) : IntegerProducts.NormSource.NONE;
        QuantizedActivations.Parts int8 = enterProducts(x, n, norm, g, u);
        integer.wrote(out, values, integer.launchSwiglu(g, u, n, int8, norm, out.at(0, values), stream));
    }

    /**
     * Enters a fused integer launch on x [n, w[0].cols]: the op counted, the compute stream after w's uploads, and x's
     * int8 form (the one the previous op wrote, or quantized now); null where the launch norms its own input from
     * {@code norm} (a taken {@link DeferredNorm}; else {@link IntegerProducts.NormSource#NONE}).
     */
    private QuantizedActivations.Parts enterProducts(ActivationBuffer x, int n, IntegerProducts.NormSource norm,
                                                     CudaWeight... w) {
        int cols = w[0].cols();
        DeviceActivations input = own(x, (long) n * cols);
        computeEnter();
        for (CudaWeight each : w) {
            ready(each);
        }
        return norm == IntegerProducts.NormSource.NONE ? integer.input(input, input.at(0, (long) n * cols), n, cols,
                stream) : null;
    }

    /** The caches of the batch's sequences are {@code kvDim} wide and may take the rows about to be written. */
    private static void checkWritable(BatchLayout batch, int layer, int kvHeads, int kvDim) {
        for (BatchLayout.Segment s : batch.segments()) {
            s.cache().pool().checkShape(kvHeads, kvDim);
            s.cache().checkWritable(layer, s.startPos(), s.length());
        }
    }

    @Override
    public void geglu(ActivationBuffer gate, ActivationBuffer up, int length) {
        elementwise("zse_cuda_geglu", gate, up, length);
    }

    @Override
    public void scale(ActivationBuffer x, int length, float factor) {
        check(length > 0, "length must be positive");
        DeviceActivations a = own(x, length);
        computeEnter();
        cuda.call("zse_cuda_scale", a.at(0, length), (long) length, factor, stream.handle());
    }

    @Override
    public void reluSquaredGlu(ActivationBuffer gate, ActivationBuffer up, int length) {
        elementwise("zse_cuda_relu_squared_glu", gate, up, length);
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, ActivationBuffer out) {
        CudaWeight w = own(table);
        check(tokens.length > 0, "no tokens");
        for (int token : tokens) {
            if (token < 0 || token >= w.rows()) {
                throw new IllegalArgumentException("token id " + token + " outside the vocabulary 0.." + (w.rows() - 1));
            }
        }
        DeviceActivations o = own(out, (long) tokens.length * w.cols());
        computeEnter();
        ready(w);
        MemorySegment ids;
        if (pass != null && tokens == pass.tokens) {
            ids = pass.tokensAddress;
            pass.vocab = w.rows();
        } else {
            ids = slot(1).upload(tokens, stream);
        }
        cuda.call("zse_cuda_embed", w.data(), w.scales(), w.type().code(), w.groupSize(), w.rows(), w.cols(), ids,
                tokens.length, o.at(0, (long) tokens.length * w.cols()), stream.handle());
    }

    @Override
    public void add(ActivationBuffer x, ActivationBuffer y, int length) {
        elementwise("zse_cuda_add", x, y, length);
    }

    /** x[k] = f(x[k], y[k]) for k < length, by a kernel taking (x, y, length, stream). */
    private void elementwise(String kernel, ActivationBuffer x, ActivationBuffer y, int length) {
        check(length > 0, "length must be positive");
        DeviceActivations a = own(x, length);
        DeviceActivations b = own(y, length);
        computeEnter();
        cuda.call(kernel, a.at(0, length), b.at(0, length), (long) length, stream.handle());
    }

    /**
     * The device copy of a host vector of the model (a norm weight, a bias, RoPE frequencies), uploaded on first use:
     * those arrays live as long as the model, so they are known by identity.
     */
    private MemorySegment vector(float[] values) {
        DeviceBuffer known = vectors.get(values);
        if (known == null) {
            long bytes = (long) values.length * Float.BYTES;
            known = new DeviceBuffer(cuda, Math.max(bytes, Float.BYTES));
            MemorySegment staged = slot(2).upload(values, 0, values.length, stream);
            cuda.call("zse_cuda_copy_on_device", known.at(0, bytes), staged, bytes, stream.handle());
            vectors.put(values, known);
        }
        return known.at(0, (long) values.length * Float.BYTES);
    }

    /** Index of the largest logit of each of the n rows of logits [n, vocab] (lowest index on ties, NaN never). */
    public int[] argmax(float[] logits, int n, int vocab) {
        check(n > 0 && vocab > 0, "n and vocab must be positive");
        checkLength("logits", logits, (long) n * vocab);
        computeEnter();
        MemorySegment l = slot(0).upload(logits, 0, n * vocab, stream);
        MemorySegment ids = slot(1).device((long) n * Integer.BYTES).at(0, (long) n * Integer.BYTES);
        cuda.call("zse_cuda_argmax", l, n, vocab, ids, stream.handle());
        int[] result = new int[n];
        slot(1).download(result, n, stream);
        return result;
    }

    /** The k best ids of one row of logits, best first (ties: lower id first); k ≤ min(vocab, 1024). */
    public int[] topK(float[] logits, int vocab, int k) {
        check(vocab > 0 && k > 0 && k <= Math.min(vocab, 1024), "need 0 < k <= min(vocab, 1024)");
        checkLength("logits", logits, vocab);
        computeEnter();
        MemorySegment l = slot(0).upload(logits, 0, vocab, stream);
        MemorySegment values = slot(1).device((long) k * Float.BYTES).at(0, (long) k * Float.BYTES);
        MemorySegment ids = slot(2).device((long) k * Integer.BYTES).at(0, (long) k * Integer.BYTES);
        cuda.call("zse_cuda_top_k", l, vocab, k, values, ids, stream.handle());
        int[] result = new int[k];
        slot(2).download(result, k, stream);
        return result;
    }

    /**
     * One token for each of the n rows of logits [n, vocab] (activations of this backend), drawn on the device so only
     * the ids come back. {@code parameters} holds per row: temperature (0: argmax), top-k (0: off), top-p, min-p and
     * the uniform draw u in [0, 1). The draw is io.zse.generate.Sampler's without penalties: given as u the next
     * {@code nextDouble()} of the sequence's generator, the device picks the token the CPU sampler picks (their sums in
     * double differ only in the order of the vocabulary-wide one). A row is -1 when the device left it to the host:
     * more than 1024 candidates survive top-k, top-p and min-p.
     */
    @Override
    public int[] sample(ActivationBuffer logits, int n, int vocab, double[] parameters) {
        check(n > 0 && vocab > 0, "n and vocab must be positive");
        check(parameters.length == 5 * n, "need 5 sampling parameters per row, got " + parameters.length + " for " + n);
        DeviceActivations rows = own(logits, (long) n * vocab);
        computeEnter();
        long parameterBytes = (long) parameters.length * Double.BYTES;
        long idBytes = (long) n * Integer.BYTES;
        long scratchOffset = (parameterBytes + idBytes + 255) & ~255L;
        long bytes = scratchOffset + (long) n * vocab * Float.BYTES;
        if (sampling == null || sampling.bytes() < bytes || samplingStaging.bytes() < scratchOffset) {
            DeviceBuffer device = sampling;
            PinnedBuffer staging = samplingStaging;
            sampling = null;
            samplingStaging = null;
            Resources.closeAll(device, staging);
            DeviceBuffer grown = new DeviceBuffer(cuda, bytes);
            samplingStaging = Resources.madeAfter(grown, () -> new PinnedBuffer(cuda, scratchOffset));
            sampling = grown;
        }
        MemorySegment.copy(parameters, 0, samplingStaging.writable(parameterBytes), ValueLayout.JAVA_DOUBLE, 0,
                parameters.length);
        samplingStaging.copyTo(sampling, parameterBytes, 0, stream);
        cuda.call("zse_cuda_sample", rows.at(0, (long) n * vocab), n, vocab, sampling.at(0, parameterBytes),
                sampling.at(scratchOffset, (long) n * vocab * Float.BYTES), sampling.at(parameterBytes, idBytes),
                stream.handle());
        MemorySegment ids = samplingStaging.segment().asSlice(parameterBytes, idBytes);
        sampling.copyTo(ids, parameterBytes, stream);
        stream.synchronize();
        int[] drawn = ids.toArray(ValueLayout.JAVA_INT);
        for (int id : drawn) {
            drawnRows += id >= 0 ? 1 : 0;
        }
        return drawn;
    }

    @Override
    public boolean samplesOnDevice() {
        return true;
    }

    private DeviceKvPool devicePool(KvBlockPool pool) {
        DeviceKvPool device = kvPools.get(pool);
        if (device == null) {
            // pools come and go outside passes too (an embedding's pool each input): free the closed ones before
            // copying another. Not while a pass may be capturing: nothing may be freed then.
            if (pass == null) {
                closeAbandonedKvPools();
            }
            DeviceKvPool created = new DeviceKvPool(cuda, pool);
            kvPools.put(pool, created);
            // a garbage pool's device memory is freed when this backend next copies a pool or starts a pass
            CLEANER.register(pool, () -> abandonedKvPools.add(created));
            device = created;
        }
        return device;
    }

    /** Device pools whose host pool is closed (a prompt pass's, its arena closed) or garbage: their memory freed. */
    private void closeAbandonedKvPools() {
        kvPools.entrySet().removeIf(e -> {
            if (e.getKey().isOpen()) {
                return false;
            }
            e.getValue().close(); // at once, not when the collector finds the pool (an embedding's pool each input)
            return true;
        });
        for (DeviceKvPool gone; (gone = abandonedKvPools.poll()) != null; ) {
            gone.close();
        }
    }

    private StagedBuffer slot(int i) {
        while (slots.size() <= i) {
            slots.add(new StagedBuffer(cuda));
        }
        return slots.get(i);
    }

    private DeviceActivations own(ActivationBuffer buffer, long floats) {
        if (!(buffer instanceof DeviceActivations d)) {
            throw new IllegalArgumentException("activations " + buffer + " were not allocated by the CUDA backend");
        }
        check(d.capacity() >= floats, "activations of " + d.capacity() + " floats, the op needs " + floats);
        return d;
    }

    private CudaWeight own(WeightMatrix w) {
        if (w instanceof CudaWeight c && weights.contains(c)) {
            return c;
        }
        throw new IllegalArgumentException("weight " + w + " was not prepared by this CUDA backend");
    }

    private void enter() {
        enterDevice();
        if (deferredNorm != null) {
            runDeferredNorm();
        }
        integer.enter();
    }

    /** Checks the backend is open and makes its device current, without counting an op (the int8 fusions count). */
    private void enterDevice() {
        if (closed) {
            throw new IllegalStateException("CUDA backend used after close");
        }
        cuda.setDevice(device.index());
    }

    private void computeEnter() {
        enter();
    }

    /** The compute stream's later work waits for w's upload to land (the first time w is used; a no-op after). */
    private void ready(CudaWeight w) {
        List<WeightUploader.Upload> copies = landing.remove(w);
        if (copies != null) {
            awaitedWeight = w.name();
            copies.forEach(c -> c.orderAfter(stream));
            deinterleave.run(w, stream);
        }
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    private static void checkLength(String name, float[] array, long needed) {
        if (array.length < needed) {
            throw new IllegalArgumentException(name + " has " + array.length + " values, the op needs " + needed);
        }
    }

    @Override
    public void finish() {
        enterDevice(); // not an op: an op's int8 output stays the next product's input across a wait
        stream.synchronize();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cuda.setDevice(device.index());
            stream.synchronize();
        } finally {
            // every resource, in this order, even where freeing one fails: the uploader before the weights it copies
            // into, the stream last
            List<AutoCloseable> owned = new ArrayList<>();
            owned.add(this::dropGraphs);
            owned.addAll(Arrays.asList(passInputs, deinterleave, splitWorkspace, integer, sampling, samplingStaging,
                    uploader));
            owned.addAll(kvPools.values());
            owned.addAll(abandonedKvPools);
            owned.addAll(weights);
            owned.addAll(weightMemory);
            owned.addAll(vectors.values());
            owned.addAll(slots);
            owned.add(stream);
            Resources.closeAll(owned);
        }
    }
}
