package io.zse.backend.cuda;

import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvCache;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
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
 * <p>The {@link Backend} interface passes activations as {@code float[]}, so each op uploads its inputs through
 * pinned staging buffers, runs, and downloads its output: correct, but a decode step pays a few hundred small
 * PCIe round trips. A device-resident interface (activation handles, a KvCache the backend owns, one forward call per
 * step) would keep everything on the GPU and let the decode step be captured once as a {@link CudaGraph}.
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
    private final Map<Long, CudaWeight> weightsByAddress = new HashMap<>();
    private final Set<CudaWeight> weights = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<KvCache, DeviceKvCache> kvCaches = new WeakHashMap<>();
    private final Queue<DeviceKvCache> abandonedKvCaches = new ConcurrentLinkedQueue<>();
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
        CudaWeight known = weightsByAddress.get(tensor.data().address());
        if (known != null) {
            return known;
        }
        DeviceBuffer memory = new DeviceBuffer(cuda, CudaWeight.scalesOffset(dataBytes) + scaleBytes);
        CudaWeight w = new CudaWeight(tensor.name(), tensor.type(), tensor.groupSize(), rows, cols, memory, dataBytes,
                scaleBytes);
        weightsByAddress.put(tensor.data().address(), w);
        weights.add(w);
        uploader.upload(tensor.data(), memory, 0);
        if (scaleBytes > 0) {
            uploader.upload(tensor.scales(), memory, CudaWeight.scalesOffset(dataBytes));
        }
        uploadsPending = true;
        return w;
    }

    @Override
    public void matmul(float[] x, int n, WeightMatrix weight, float[] out) {
        CudaWeight w = own(weight);
        check(n > 0, "n must be positive");
        checkLength("x", x, (long) n * w.cols());
        checkLength("out", out, (long) n * w.rows());
        computeEnter();
        MemorySegment input = slot(0).upload(x, 0, n * w.cols(), stream);
        MemorySegment output = slot(1).device((long) n * w.rows() * Float.BYTES).at(0, (long) n * w.rows() * Float.BYTES);
        cuda.call("zse_cuda_matmul", w.data(), w.scales(), w.type().code(), w.groupSize(), w.rows(), w.cols(), input, n,
                output, stream.handle());
        slot(1).download(out, n * w.rows(), stream);
    }

    @Override
    public void addBias(float[] x, int n, float[] bias) {
        check(n > 0 && bias.length > 0, "n and the bias length must be positive");
        checkLength("x", x, (long) n * bias.length);
        computeEnter();
        MemorySegment rows = slot(0).upload(x, 0, n * bias.length, stream);
        MemorySegment b = slot(1).upload(bias, 0, bias.length, stream);
        cuda.call("zse_cuda_add_bias", rows, n, b, bias.length, stream.handle());
        slot(0).download(x, n * bias.length, stream);
    }

    @Override
    public void rmsNorm(float[] x, int n, float[] weight, float eps, float[] out) {
        int dim = weight.length;
        check(n > 0 && dim > 0, "n and the weight length must be positive");
        checkLength("x", x, (long) n * dim);
        checkLength("out", out, (long) n * dim);
        computeEnter();
        MemorySegment in = slot(0).upload(x, 0, n * dim, stream);
        MemorySegment w = slot(1).upload(weight, 0, dim, stream);
        MemorySegment o = slot(2).device((long) n * dim * Float.BYTES).at(0, (long) n * dim * Float.BYTES);
        cuda.call("zse_cuda_rms_norm", in, n, w, dim, eps, o, stream.handle());
        slot(2).download(out, n * dim, stream);
    }

    /**
     * Each sequence of the batch on its own: this backend still copies activations per op (the device-resident one
     * replaces it), so the rows of one segment go up, are rotated, and come back.
     */
    @Override
    public void rope(float[] x, BatchLayout batch, int heads, int headDim, float[] inverseFrequencies) {
        int width = heads * headDim;
        checkLength("x", x, (long) batch.rows() * width);
        for (BatchLayout.Segment s : batch.segments()) {
            float[] rows = Arrays.copyOfRange(x, s.offset() * width, (s.offset() + s.length()) * width);
            rope(rows, s.length(), heads, headDim, s.startPos(), inverseFrequencies);
            System.arraycopy(rows, 0, x, s.offset() * width, rows.length);
        }
    }

    private void rope(float[] x, int n, int heads, int headDim, int startPos, float[] inverseFrequencies) {
        check(n > 0 && heads > 0 && headDim > 0 && headDim % 2 == 0 && startPos >= 0,
                "n, heads and an even headDim must be positive, startPos >= 0");
        checkLength("inverseFrequencies", inverseFrequencies, headDim / 2);
        checkLength("x", x, (long) n * heads * headDim);
        computeEnter();
        MemorySegment rows = slot(0).upload(x, 0, n * heads * headDim, stream);
        MemorySegment f = slot(1).upload(inverseFrequencies, 0, headDim / 2, stream);
        cuda.call("zse_cuda_rope", rows, n, heads, headDim, startPos, f, stream.handle());
        slot(0).download(x, n * heads * headDim, stream);
    }

    /** Each sequence of the batch on its own, as {@link #rope(float[], BatchLayout, int, int, float[])}. */
    @Override
    public void attention(float[] q, BatchLayout batch, int layer, AttentionShape shape, float[] out) {
        int width = shape.queryDim();
        checkLength("q", q, (long) batch.rows() * width);
        checkLength("out", out, (long) batch.rows() * width);
        for (BatchLayout.Segment s : batch.segments()) {
            float[] rows = Arrays.copyOfRange(q, s.offset() * width, (s.offset() + s.length()) * width);
            float[] attended = new float[rows.length];
            attention(rows, s.length(), s.startPos(), s.cache(), layer, shape, attended);
            System.arraycopy(attended, 0, out, s.offset() * width, attended.length);
        }
    }

    private void attention(float[] q, int n, int startPos, KvCache cache, int layer, AttentionShape shape,
                           float[] out) {
        check(n > 0 && startPos >= 0 && layer >= 0, "n must be positive, startPos and layer >= 0");
        check(shape.kvDim() == cache.kvDim(), "the attention shape's kv dim " + shape.kvDim()
                + " differs from the cache's " + cache.kvDim());
        check((long) startPos + n <= cache.capacity(), "positions up to " + (startPos + n)
                + " exceed the KV cache capacity of " + cache.capacity());
        check(shape.headDim() <= 256, "head dim " + shape.headDim() + " above 256 is not supported on CUDA");
        checkLength("q", q, (long) n * shape.queryDim());
        checkLength("out", out, (long) n * shape.queryDim());
        computeEnter();
        DeviceKvCache mirror = mirrorOf(cache);
        mirror.sync(cache, layer, startPos, startPos + n, slot(3), stream);
        MemorySegment queries = slot(0).upload(q, 0, n * shape.queryDim(), stream);
        long outBytes = (long) n * shape.queryDim() * Float.BYTES;
        MemorySegment o = slot(1).device(outBytes).at(0, outBytes);
        cuda.call("zse_cuda_attention", queries, n, startPos, mirror.keys(layer), mirror.values(layer),
                shape.numHeads(), shape.numKvHeads(), shape.headDim(), shape.slidingWindow(), o, stream.handle());
        slot(1).download(out, n * shape.queryDim(), stream);
    }

    @Override
    public void swiglu(float[] gate, float[] up, int length) {
        elementwise("zse_cuda_swiglu", gate, up, length);
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, float[] out) {
        CudaWeight w = own(table);
        check(tokens.length > 0, "no tokens");
        for (int token : tokens) {
            if (token < 0 || token >= w.rows()) {
                throw new IllegalArgumentException("token id " + token + " outside the vocabulary 0.." + (w.rows() - 1));
            }
        }
        checkLength("out", out, (long) tokens.length * w.cols());
        computeEnter();
        MemorySegment ids = slot(0).upload(tokens, stream);
        long outBytes = (long) tokens.length * w.cols() * Float.BYTES;
        MemorySegment o = slot(1).device(outBytes).at(0, outBytes);
        cuda.call("zse_cuda_embed", w.data(), w.scales(), w.type().code(), w.groupSize(), w.rows(), w.cols(), ids,
                tokens.length, o, stream.handle());
        slot(1).download(out, tokens.length * w.cols(), stream);
    }

    @Override
    public void add(float[] x, float[] y, int length) {
        elementwise("zse_cuda_add", x, y, length);
    }

    /** x[k] = f(x[k], y[k]) for k < length, by a kernel taking (x, y, length, stream). */
    private void elementwise(String kernel, float[] x, float[] y, int length) {
        check(length > 0, "length must be positive");
        checkLength("x", x, length);
        checkLength("y", y, length);
        computeEnter();
        MemorySegment a = slot(0).upload(x, 0, length, stream);
        MemorySegment b = slot(1).upload(y, 0, length, stream);
        cuda.call(kernel, a, b, (long) length, stream.handle());
        slot(0).download(x, length, stream);
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

    private DeviceKvCache mirrorOf(KvCache cache) {
        for (DeviceKvCache gone; (gone = abandonedKvCaches.poll()) != null; ) {
            gone.close();
        }
        DeviceKvCache mirror = kvCaches.get(cache);
        if (mirror == null) {
            DeviceKvCache created = new DeviceKvCache(cuda, cache);
            kvCaches.put(cache, created);
            // When the sequence's cache is garbage, its device copy is freed on this backend's next attention call.
            CLEANER.register(cache, () -> abandonedKvCaches.add(created));
            mirror = created;
        }
        return mirror;
    }

    private StagedBuffer slot(int i) {
        while (slots.size() <= i) {
            slots.add(new StagedBuffer(cuda));
        }
        return slots.get(i);
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
            kvCaches.values().forEach(DeviceKvCache::close);
            abandonedKvCaches.forEach(DeviceKvCache::close);
            weights.forEach(CudaWeight::close);
            slots.forEach(StagedBuffer::close);
            uploader.close();
            stream.close();
        }
    }
}
