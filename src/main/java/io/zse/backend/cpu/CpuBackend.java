package io.zse.backend.cpu;

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
    public void matmul(float[] x, int n, WeightMatrix w, float[] out) {
        matmulOf(w).multiply(x, n, out, threads);
    }

    @Override
    public void addBias(float[] x, int n, float[] bias) {
        for (int i = 0; i < n; i++) {
            add(x, i * bias.length, bias);
        }
    }

    private static void add(float[] x, int offset, float[] y) {
        for (int k = 0; k < y.length; k++) {
            x[offset + k] += y[k];
        }
    }

    @Override
    public void rmsNorm(float[] x, int n, float[] weight, float eps, float[] out) {
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
    public void rope(float[] x, BatchLayout batch, int heads, int headDim, float[] inverseFrequencies) {
        int half = headDim / 2;
        for (int i = 0; i < batch.rows(); i++) {
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
    public void attention(float[] q, BatchLayout batch, int layer, AttentionShape shape, float[] out) {
        CpuAttention.attend(q, batch, layer, shape, out, kernels.kvRowProducts(), threads);
    }

    @Override
    public void swiglu(float[] gate, float[] up, int length) {
        for (int k = 0; k < length; k++) {
            float g = gate[k];
            gate[k] = g / (1f + (float) Math.exp(-g)) * up[k];
        }
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, float[] out) {
        CpuWeight m = matmulOf(table);
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= m.rows()) {
                throw new IllegalArgumentException("token id " + tokens[i] + " outside the vocabulary 0.." + (m.rows() - 1));
            }
            m.decodeRow(tokens[i], out, i * m.cols());
        }
    }

    @Override
    public void add(float[] x, float[] y, int length) {
        for (int k = 0; k < length; k++) {
            x[k] += y[k];
        }
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
