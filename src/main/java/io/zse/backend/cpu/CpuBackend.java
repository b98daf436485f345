package io.zse.backend.cpu;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseTensor;

/**
 * The CPU backend: {@link CpuKernels} (Vector API or plain Java, see {@link CpuKernelChoice}) reading weights in place
 * from the mapped file, work split over a fixed pool of {@link CpuThreads}. The element-wise ops are plain loops.
 */
public final class CpuBackend implements Backend {
    private final CpuThreads threads;
    private final CpuKernels kernels;

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
        if (floats < 0 || floats > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("an activation buffer of " + floats + " floats");
        }
        return new HostActivations((int) floats);
    }

    @Override
    public void write(float[] values, ActivationBuffer into) {
        System.arraycopy(values, 0, array(into), 0, values.length);
    }

    @Override
    public void read(ActivationBuffer from, float[] into, int count) {
        System.arraycopy(array(from), 0, into, 0, count);
    }

    @Override
    public void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into) {
        float[] source = array(from);
        float[] target = array(into);
        for (int i = 0; i < rows.length; i++) {
            System.arraycopy(source, rows[i] * width, target, i * width, width);
        }
    }

    @Override
    public void matmul(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer out) {
        matmulOf(w).multiply(array(x), n, array(out), threads);
    }

    @Override
    public void addBias(ActivationBuffer x, int n, float[] bias) {
        float[] rows = array(x);
        for (int i = 0; i < n; i++) {
            int offset = i * bias.length;
            for (int k = 0; k < bias.length; k++) {
                rows[offset + k] += bias[k];
            }
        }
    }

    @Override
    public void rmsNorm(ActivationBuffer input, int n, float[] weight, float eps, ActivationBuffer output) {
        float[] x = array(input);
        float[] out = array(output);
        int dim = weight.length;
        for (int i = 0; i < n; i++) {
            int row = i * dim;
            double sumOfSquares = 0;
            for (int k = 0; k < dim; k++) {
                sumOfSquares += (double) x[row + k] * x[row + k];
            }
            float inverseRms = (float) (1.0 / Math.sqrt(sumOfSquares / dim + eps));
            for (int k = 0; k < dim; k++) {
                out[row + k] = weight[k] * (x[row + k] * inverseRms);
            }
        }
    }

    @Override
    public void rope(ActivationBuffer rows, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
                     float[] inverseFrequencies) {
        float[] x = array(rows);
        int half = headDim / 2;
        for (int i = fromRow; i < toRow; i++) {
            float position = batch.position(i);
            for (int j = 0; j < half; j++) {
                // The angle in F32 like the reference implementation; cos and sin of it rounded once.
                float angle = position * inverseFrequencies[j];
                float cos = (float) Math.cos(angle);
                float sin = (float) Math.sin(angle);
                for (int h = 0; h < heads; h++) {
                    int base = (i * heads + h) * headDim;
                    float a = x[base + j];
                    float b = x[base + j + half];
                    x[base + j] = a * cos - b * sin;
                    x[base + j + half] = b * cos + a * sin;
                }
            }
        }
    }

    @Override
    public void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer) {
        for (BatchLayout.Segment s : batch.segments()) {
            s.cache().store(layer, s.startPos(), s.length(), array(k), array(v), s.offset());
        }
    }

    @Override
    public void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out) {
        CpuAttention.attend(array(q), batch, layer, shape, array(out), kernels.kvRowProducts(), threads);
    }

    @Override
    public void swiglu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        kernels.swiglu(array(gates), array(ups), length);
    }

    /** Plain Java on every kernel family: one multiply-add per element, far from where the time goes. */
    @Override
    public void reluSquaredGlu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        float[] gate = array(gates);
        float[] up = array(ups);
        for (int k = 0; k < length; k++) {
            float g = Math.max(gate[k], 0f);
            gate[k] = g * g * up[k];
        }
    }

    @Override
    public void geglu(ActivationBuffer gates, ActivationBuffer ups, int length) {
        kernels.geglu(array(gates), array(ups), length);
    }

    @Override
    public void scale(ActivationBuffer xs, int length, float factor) {
        float[] x = array(xs);
        for (int k = 0; k < length; k++) {
            x[k] *= factor;
        }
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, ActivationBuffer output) {
        CpuWeight m = matmulOf(table);
        float[] out = array(output);
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= m.rows()) {
                throw new IllegalArgumentException("token id " + tokens[i] + " outside the vocabulary 0.." + (m.rows() - 1));
            }
            m.decodeRow(tokens[i], out, i * m.cols());
        }
    }

    @Override
    public void add(ActivationBuffer xs, ActivationBuffer ys, int length) {
        float[] x = array(xs);
        float[] y = array(ys);
        for (int k = 0; k < length; k++) {
            x[k] += y[k];
        }
    }

    private static float[] array(ActivationBuffer buffer) {
        if (buffer instanceof HostActivations h) {
            return h.data;
        }
        throw new IllegalArgumentException("activations " + buffer + " were not allocated by the CPU backend");
    }

    private static CpuWeight matmulOf(WeightMatrix w) {
        if (w instanceof CpuWeight m) {
            return m;
        }
        throw new IllegalArgumentException("weight " + w + " was not prepared by the CPU backend");
    }

    @Override
    public void close() {
        threads.close();
    }
}
