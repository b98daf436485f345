package io.zse.backend.cpu;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseTensor;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * The CPU backend: {@link CpuKernels} (Vector API or plain Java, see {@link CpuKernelChoice}) reading weights in place
 * from the mapped file, work split over a fixed pool of {@link CpuThreads}; activations are off-heap
 * {@link HostActivations} the kernels read and write in place, the element-wise ops and attention among them.
 */
public final class CpuBackend implements Backend {
    private final CpuThreads threads;
    private final CpuKernels kernels;
    /** The releases of the activation buffers not closed yet: what {@link #close} frees. */
    private final Set<Runnable> open = ConcurrentHashMap.newKeySet();

    /** Uses {@link CpuThreads#defaultThreads()} threads ({@code zse.threads}, else every core). */
    public CpuBackend() {
        this(CpuThreads.defaultThreads());
    }

    /** With the kernels of this process ({@link CpuKernelChoice#selected()}). */
    public CpuBackend(int threads) {
        this(threads, CpuKernelChoice.selected());
    }

    public CpuBackend(int threads, CpuKernels kernels) {
        this.threads = new CpuThreads(threads);
        this.kernels = kernels;
    }

    public int threads() {
        return threads.threads();
    }

    public CpuKernels kernels() {
        return kernels;
    }

    @Override
    public WeightMatrix weight(ZseTensor tensor) {
        return kernels.weight(tensor);
    }

    @Override
    public ActivationBuffer allocate(long floats) {
        if (floats < 0 || floats > Long.MAX_VALUE / Float.BYTES - 16) {
            throw new IllegalArgumentException("an activation buffer of " + floats + " floats");
        }
        return new HostActivations(floats, open);
    }

    /** Activation buffers allocated here and not closed yet (off-heap memory this backend still holds). */
    public int openBuffers() {
        return open.size();
    }

    @Override
    public void write(float[] values, ActivationBuffer into) {
        MemorySegment.copy(values, 0, segment(into), FLOAT, 0, values.length);
    }

    @Override
    public void read(ActivationBuffer from, float[] into, int count) {
        MemorySegment.copy(segment(from), FLOAT, 0, into, 0, count);
    }

    @Override
    public void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into) {
        MemorySegment source = segment(from);
        MemorySegment target = segment(into);
        long rowBytes = (long) width * Float.BYTES;
        for (int i = 0; i < rows.length; i++) {
            MemorySegment.copy(source, rows[i] * rowBytes, target, i * rowBytes, rowBytes);
        }
    }

    @Override
    public void matmul(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer out) {
        matmulOf(w).multiply(segment(x), n, segment(out), threads);
    }

    /** One parallel loop for all the products when the native kernels run them on int8 blocks of one input. */
    @Override
    public void matmuls(ActivationBuffer x, int n, WeightMatrix[] ws, ActivationBuffer[] outs) {
        NativeWeight[] natives = new NativeWeight[ws.length];
        MemorySegment[] outputs = new MemorySegment[ws.length];
        for (int j = 0; j < ws.length; j++) {
            if (!(matmulOf(ws[j]) instanceof NativeWeight w) || !w.takesInt8Blocks() || w.cols != ws[0].cols()) {
                Backend.super.matmuls(x, n, ws, outs);
                return;
            }
            natives[j] = w;
            outputs[j] = segment(outs[j]);
        }
        NativeWeight.multiplyTogether(natives, segment(x), n, outputs, threads);
    }

    @Override
    public void addBias(ActivationBuffer x, int n, float[] bias) {
        MemorySegment rows = segment(x);
        for (int i = 0; i < n; i++) {
            long offset = (long) i * bias.length;
            for (int k = 0; k < bias.length; k++) {
                rows.setAtIndex(FLOAT, offset + k, rows.getAtIndex(FLOAT, offset + k) + bias[k]);
            }
        }
    }

    @Override
    public void rmsNorm(ActivationBuffer input, int n, float[] weight, float eps, ActivationBuffer output) {
        kernels.rmsNorm(segment(input), n, weight, eps, segment(output));
    }

    @Override
    public void rope(ActivationBuffer rows, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
                     float[] inverseFrequencies) {
        kernels.rope(segment(rows), fromRow, toRow, batch.positions(), heads, headDim, inverseFrequencies);
    }

    @Override
    public void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer) {
        for (BatchLayout.Segment s : batch.segments()) {
            s.cache().store(layer, s.startPos(), s.length(), segment(k), segment(v), s.offset());
        }
    }

    @Override
    public void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out) {
        batch.checkCacheShape(shape.numKvHeads(), shape.kvDim());
        kernels.attention(segment(q), batch, layer, shape, segment(out), threads);
    }

    @Override
    public void swiglu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        kernels.swiglu(segment(gates), segment(ups), length);
    }

    @Override
    public void reluSquaredGlu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        kernels.reluSquaredGlu(segment(gates), segment(ups), length);
    }

    @Override
    public void geglu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        kernels.geglu(segment(gates), segment(ups), length);
    }

    @Override
    public void scale(ActivationBuffer xs, int length, float factor) {
        kernels.scale(segment(xs), length, factor);
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, ActivationBuffer output) {
        CpuWeight m = matmulOf(table);
        MemorySegment out = segment(output);
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= m.rows()) {
                throw new IllegalArgumentException("token id " + tokens[i] + " outside the vocabulary 0.." + (m.rows() - 1));
            }
            m.decodeRow(tokens[i], out, (long) i * m.cols());
        }
    }

    @Override
    public void add(ActivationBuffer xs, ActivationBuffer ys, int length) {
        kernels.add(segment(xs), segment(ys), length);
    }

    private static MemorySegment segment(ActivationBuffer buffer) {
        if (buffer instanceof HostActivations h) {
            return h.segment();
        }
        throw new IllegalArgumentException("activations " + buffer + " were not allocated by the CPU backend");
    }

    private static CpuWeight matmulOf(WeightMatrix w) {
        if (w instanceof CpuWeight m) {
            return m;
        }
        throw new IllegalArgumentException("weight " + w + " was not prepared by the CPU backend");
    }

    /** Stops the worker threads and frees every activation buffer still open. */
    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            threads.close();
        } finally {
            for (Runnable release : List.copyOf(open)) {
                try {
                    release.run();
                } catch (RuntimeException e) { // a buffer still in a native call (a step that outlived its engine)
                    failure = failure == null ? e : failure;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
