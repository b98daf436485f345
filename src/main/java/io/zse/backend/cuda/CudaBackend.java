package io.zse.backend.cuda;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The CUDA backend: weights live on the device in their .zse layout and every op runs as a libzse_cuda kernel.
 *
 * <p>Activations stay on the device ({@link DeviceActivations}); model vectors (norms, biases, RoPE frequencies) are
 * uploaded once. Keys and values live in a device copy of each {@link KvBlockPool} ({@link DeviceKvPool}) with the
 * host's block numbering: the host keeps the block tables and the prefix cache, the device the rows, written and read
 * by paged kernels through the tables uploaded once per forward pass ({@link BatchTables}). Per step only token ids go
 * in and the logits rows the sampler asks for come out.
 *
 * <p>Not thread-safe: like the CPU backend's callers, one engine thread drives it.
 */
public final class CudaBackend implements Backend {
    private static final Cleaner CLEANER = Cleaner.create();

    private final CudaLibrary cuda;
    private final CudaDevice device;
    private final CudaStream stream;
    private final WeightUploader uploader;
    private final List<StagedBuffer> slots = new ArrayList<>();
    private final Map<MappedTensor, CudaWeight> weightsByTensor = new HashMap<>();
    private final Set<CudaWeight> weights = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<KvBlockPool, DeviceKvPool> kvPools = new WeakHashMap<>();
    private final Map<float[], DeviceBuffer> vectors = new IdentityHashMap<>();
    private final Queue<DeviceKvPool> abandonedKvPools = new ConcurrentLinkedQueue<>();
    private BatchLayout tablesFor;  // the layout whose tables are on the device now
    private BatchTables batchTables;
    private MemorySegment tablesAddress;
    private boolean uploadsPending;
    private boolean closed;

    public CudaBackend(CudaLibrary cuda, CudaDevice device) {
        this.cuda = cuda;
        this.device = device;
        cuda.setDevice(device.index());
        this.stream = new CudaStream(cuda);
        this.uploader = new WeightUploader(cuda);
    }

    public CudaDevice device() {
        return device;
    }

    /** Bytes of weights copied to the device so far. */
    public long uploadedBytes() {
        return uploader.bytesUploaded();
    }

    /** Waits until every weight upload has landed (ops do this themselves; benchmarks call it to time the upload). */
    public void finishUploads() {
        enter();
        uploader.finish();
        uploadsPending = false;
    }

    @Override
    public WeightMatrix weight(ZseTensor tensor) {
        enter();
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
        MappedTensor key = new MappedTensor(tensor.data().scope(), tensor.data().address(), dataBytes);
        CudaWeight known = weightsByTensor.get(key);
        if (known != null) {
            return known;
        }
        DeviceBuffer memory = new DeviceBuffer(cuda, CudaWeight.scalesOffset(dataBytes) + scaleBytes);
        CudaWeight w = new CudaWeight(tensor.name(), tensor.type(), tensor.groupSize(), rows, cols, memory, dataBytes,
                scaleBytes);
        weightsByTensor.put(key, w);
        weights.add(w);
        uploader.upload(tensor.data(), memory, 0);
        if (scaleBytes > 0) {
            uploader.upload(tensor.scales(), memory, CudaWeight.scalesOffset(dataBytes));
        }
        uploadsPending = true;
        return w;
    }

    /** A tensor's bytes in one mapping of a file. */
    private record MappedTensor(MemorySegment.Scope mapping, long address, long bytes) {
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
        CudaWeight w = own(weight);
        check(n > 0, "n must be positive");
        DeviceActivations input = own(x, (long) n * w.cols());
        DeviceActivations output = own(out, (long) n * w.rows());
        computeEnter();
        cuda.call("zse_cuda_matmul", w.data(), w.scales(), w.type().code(), w.groupSize(), w.rows(), w.cols(),
                input.at(0, (long) n * w.cols()), n, output.at(0, (long) n * w.rows()), stream.handle());
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
        cuda.call("zse_cuda_rms_norm", in.at(0, (long) n * dim), n, vector(weight), dim, eps, o.at(0, (long) n * dim),
                stream.handle());
    }

    /** One launch for the whole batch: each row's position comes from the batch's tables on the device. */
    @Override
    public void rope(ActivationBuffer x, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
                     float[] inverseFrequencies) {
        check(heads > 0 && headDim > 0 && headDim % 2 == 0, "heads and an even headDim must be positive");
        check(inverseFrequencies.length >= headDim / 2, "need headDim / 2 inverse frequencies");
        check(0 <= fromRow && fromRow < toRow && toRow <= batch.rows(), "rows " + fromRow + ".." + toRow
                + " of a batch of " + batch.rows());
        int width = heads * headDim;
        DeviceActivations rows = own(x, (long) batch.rows() * width);
        computeEnter();
        MemorySegment tables = upload(batch);
        cuda.call("zse_cuda_rope", rows.at((long) fromRow * width, (long) (toRow - fromRow) * width), toRow - fromRow,
                heads, headDim, batchTables.positions(tables, fromRow), vector(inverseFrequencies), stream.handle());
    }

    /** The new rows go straight from the activations into the device block pool: nothing crosses to the host. */
    @Override
    public void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer) {
        int kvDim = batch.segments().getFirst().cache().kvDim();
        for (BatchLayout.Segment s : batch.segments()) {
            check(s.cache().kvDim() == kvDim, "the batch's caches differ in kv dim");
            s.cache().checkWritable(layer, s.startPos(), s.length());
        }
        DeviceActivations keys = own(k, (long) batch.rows() * kvDim);
        DeviceActivations values = own(v, (long) batch.rows() * kvDim);
        computeEnter();
        MemorySegment tables = upload(batch);
        for (BatchTables.Group g : batchTables.groups()) {
            DeviceKvPool pool = devicePool(g.pool());
            cuda.call("zse_cuda_store_kv", keys.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim),
                    values.at((long) g.rowStart() * kvDim, (long) g.rowCount() * kvDim), g.rowCount(), kvDim,
                    batchTables.slots(tables, g.rowStart()), pool.keys(layer), pool.values(layer), stream.handle());
        }
    }

    /** One kernel launch for all rows of the batch whose caches share a pool (the server's case: all of them). */
    @Override
    public void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out) {
        check(shape.headDim() <= 256, "head dim " + shape.headDim() + " above 256 is not supported on CUDA");
        check(layer >= 0, "negative layer");
        int width = shape.queryDim();
        DeviceActivations queries = own(q, (long) batch.rows() * width);
        DeviceActivations o = own(out, (long) batch.rows() * width);
        for (BatchLayout.Segment s : batch.segments()) {
            KvCache cache = s.cache();
            check(shape.kvDim() == cache.kvDim(), "the attention shape's kv dim " + shape.kvDim()
                    + " differs from the cache's " + cache.kvDim());
            check(layer < cache.layers(), "layer " + layer + " outside the cache's " + cache.layers());
            check((long) s.end() <= cache.reservedPositions(), "positions up to " + s.end()
                    + " exceed the " + cache.reservedPositions() + " reserved positions of the KV cache");
        }
        computeEnter();
        MemorySegment tables = upload(batch);
        for (BatchTables.Group g : batchTables.groups()) {
            DeviceKvPool pool = devicePool(g.pool());
            cuda.call("zse_cuda_paged_attention", queries.at((long) g.rowStart() * width, (long) g.rowCount() * width),
                    g.rowCount(), batchTables.positions(tables, g.rowStart()),
                    batchTables.tableOffsets(tables, g.rowStart()), batchTables.tables(tables),
                    g.pool().blockSize(), pool.keys(layer), pool.values(layer), shape.numHeads(), shape.numKvHeads(),
                    shape.headDim(), shape.slidingWindow(),
                    o.at((long) g.rowStart() * width, (long) g.rowCount() * width), stream.handle());
        }
    }

    /**
     * The batch's positions, slots and block tables on the device, uploaded once per forward pass (every layer's
     * storeKv and attention get the same layout). The block tables do not change during a pass.
     */
    private MemorySegment upload(BatchLayout batch) {
        if (batch != tablesFor) {
            batchTables = BatchTables.of(batch);
            tablesAddress = slot(4).upload(batchTables.ints(), stream);
            tablesFor = batch;
        }
        return tablesAddress;
    }

    @Override
    public void swiglu(ActivationBuffer gate, ActivationBuffer up, int length) {
        elementwise("zse_cuda_swiglu", gate, up, length);
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
        MemorySegment ids = slot(1).upload(tokens, stream);
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

    private DeviceKvPool devicePool(KvBlockPool pool) {
        for (DeviceKvPool gone; (gone = abandonedKvPools.poll()) != null; ) {
            gone.close();
        }
        DeviceKvPool device = kvPools.get(pool);
        if (device == null) {
            DeviceKvPool created = new DeviceKvPool(cuda, pool);
            kvPools.put(pool, created);
            // When the pool is garbage, its device memory is freed on this backend's next KV call.
            CLEANER.register(pool, () -> abandonedKvPools.add(created));
            device = created;
        }
        return device;
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
        if (closed) {
            throw new IllegalStateException("CUDA backend used after close");
        }
        cuda.setDevice(device.index());
    }

    private void computeEnter() {
        enter();
        if (uploadsPending) {
            uploader.finish();
            uploadsPending = false;
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
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cuda.setDevice(device.index());
            stream.synchronize();
        } finally {
            kvPools.values().forEach(DeviceKvPool::close);
            abandonedKvPools.forEach(DeviceKvPool::close);
            weights.forEach(CudaWeight::close);
            vectors.values().forEach(DeviceBuffer::close);
            slots.forEach(StagedBuffer::close);
            uploader.close();
            stream.close();
        }
    }
}
