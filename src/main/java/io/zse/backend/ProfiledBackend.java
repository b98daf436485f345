package io.zse.backend;

import io.zse.format.ZseTensor;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A backend that times every op of another, for {@code zse bench --profile}: where a forward pass spends its time.
 * Products are kept apart by weight type and shape. Times are host wall-clock time per call, up to the op's completion:
 * on an asynchronous device each op is waited for ({@link Backend#finish}), so its time holds its launch, its run on
 * the device and the wait, and ops do not overlap (nor are passes recorded as graphs: this backend runs them op by op).
 */
public final class ProfiledBackend implements Backend {
    /** Calls and nanoseconds of one op. */
    public static final class OpTime {
        private long calls;
        private long nanos;

        public long calls() {
            return calls;
        }

        public long nanos() {
            return nanos;
        }
    }

    private final Backend backend;
    private final Map<String, OpTime> times = new LinkedHashMap<>();

    public ProfiledBackend(Backend backend) {
        this.backend = backend;
    }

    public Backend profiled() {
        return backend;
    }

    /** The times since the last reset, by op, in first-call order; and starts counting afresh. */
    public synchronized Map<String, OpTime> takeTimes() {
        Map<String, OpTime> taken = new LinkedHashMap<>(times);
        times.clear();
        return taken;
    }

    private synchronized void record(String op, long nanos) {
        OpTime t = times.computeIfAbsent(op, k -> new OpTime());
        t.calls++;
        t.nanos += nanos;
    }

    private void timed(String op, Runnable call) {
        long start = System.nanoTime();
        call.run();
        backend.finish();
        record(op, System.nanoTime() - start);
    }

    private <T> T timed(String op, Supplier<T> call) {
        long start = System.nanoTime();
        T result = call.get();
        backend.finish();
        record(op, System.nanoTime() - start);
        return result;
    }

    @Override
    public WeightMatrix weight(ZseTensor tensor) {
        return backend.weight(tensor);
    }

    @Override
    public void expectWeights(List<ZseTensor> tensors) {
        backend.expectWeights(tensors);
    }

    @Override
    public ActivationBuffer allocate(long floats) {
        return timed("allocate", () -> backend.allocate(floats));
    }

    @Override
    public void write(float[] values, ActivationBuffer into) {
        timed("write", () -> backend.write(values, into));
    }

    @Override
    public void read(ActivationBuffer from, float[] into, int count) {
        timed("read", () -> backend.read(from, into, count));
    }

    @Override
    public void gatherRows(ActivationBuffer from, int[] rows, int width, ActivationBuffer into) {
        timed("gatherRows", () -> backend.gatherRows(from, rows, width, into));
    }

    @Override
    public void matmul(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer out) {
        timed("matmul " + w.type() + " [" + w.rows() + " x " + w.cols() + "]", () -> backend.matmul(x, n, w, out));
    }

    @Override
    public void matmuls(ActivationBuffer x, int n, WeightMatrix[] ws, ActivationBuffer[] outs) {
        StringBuilder label = new StringBuilder("matmuls");
        for (WeightMatrix w : ws) {
            label.append(' ').append(w.type()).append(" [").append(w.rows()).append(" x ").append(w.cols()).append(']');
        }
        timed(label.toString(), () -> backend.matmuls(x, n, ws, outs));
    }

    @Override
    public void addBias(ActivationBuffer x, int n, float[] bias) {
        timed("addBias", () -> backend.addBias(x, n, bias));
    }

    @Override
    public void rmsNorm(ActivationBuffer x, int n, float[] weight, float eps, ActivationBuffer out) {
        timed("rmsNorm", () -> backend.rmsNorm(x, n, weight, eps, out));
    }

    @Override
    public void rope(ActivationBuffer x, BatchLayout batch, int fromRow, int toRow, int heads, int headDim,
                     float[] inverseFrequencies) {
        timed("rope", () -> backend.rope(x, batch, fromRow, toRow, heads, headDim, inverseFrequencies));
    }

    @Override
    public void storeKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer) {
        timed("storeKv", () -> backend.storeKv(k, v, batch, layer));
    }

    @Override
    public void attention(ActivationBuffer q, BatchLayout batch, int layer, AttentionShape shape, ActivationBuffer out) {
        timed("attention", () -> backend.attention(q, batch, layer, shape, out));
    }

    @Override
    public void swiglu(ActivationBuffer gate, ActivationBuffer up, int length) {
        timed("swiglu", () -> backend.swiglu(gate, up, length));
    }

    @Override
    public void swigluProducts(ActivationBuffer x, int n, WeightMatrix gateWeight, WeightMatrix upWeight,
                               ActivationBuffer gate, ActivationBuffer up) {
        timed("swigluProducts " + gateWeight.type() + " [" + gateWeight.rows() + " x " + gateWeight.cols() + "] x 2",
                () -> backend.swigluProducts(x, n, gateWeight, upWeight, gate, up));
    }

    @Override
    public void geglu(ActivationBuffer gate, ActivationBuffer up, int length) {
        timed("geglu", () -> backend.geglu(gate, up, length));
    }

    @Override
    public void scale(ActivationBuffer x, int length, float factor) {
        timed("scale", () -> backend.scale(x, length, factor));
    }

    @Override
    public void addRmsNorm(ActivationBuffer x, ActivationBuffer y, int n, float[] weight, float eps,
                           ActivationBuffer out) {
        timed("addRmsNorm", () -> backend.addRmsNorm(x, y, n, weight, eps, out));
    }

    @Override
    public void projectRopeStoreKv(ActivationBuffer x, int n, WeightMatrix[] qkv, ActivationBuffer q,
                                   ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int heads,
                                   int kvHeads, int headDim, float[] inverseFrequencies) {
        timed("projectRopeStoreKv " + qkv[0].type() + " [" + qkv[0].rows() + " + " + qkv[1].rows() + " + "
                + qkv[2].rows() + " x " + qkv[0].cols() + "]", () -> backend.projectRopeStoreKv(x, n, qkv, q, k, v,
                batch, layer, heads, kvHeads, headDim, inverseFrequencies));
    }

    @Override
    public void matmulAddRmsNorm(ActivationBuffer x, int n, WeightMatrix w, ActivationBuffer projected,
                                 ActivationBuffer stream, float[] weight, float eps, ActivationBuffer out) {
        timed("matmulAddRmsNorm " + w.type() + " [" + w.rows() + " x " + w.cols() + "]",
                () -> backend.matmulAddRmsNorm(x, n, w, projected, stream, weight, eps, out));
    }

    @Override
    public void ropeStoreKv(ActivationBuffer k, ActivationBuffer v, BatchLayout batch, int layer, int kvHeads,
                            int headDim, float[] inverseFrequencies) {
        timed("ropeStoreKv", () -> backend.ropeStoreKv(k, v, batch, layer, kvHeads, headDim, inverseFrequencies));
    }

    @Override
    public void ropeQueriesAndStoreKv(ActivationBuffer q, int heads, ActivationBuffer k, ActivationBuffer v,
                                      BatchLayout batch, int layer, int kvHeads, int headDim,
                                      float[] inverseFrequencies) {
        timed("ropeQueriesAndStoreKv", () -> backend.ropeQueriesAndStoreKv(q, heads, k, v, batch, layer, kvHeads,
                headDim, inverseFrequencies));
    }

    @Override
    public void readRows(ActivationBuffer from, int[] rows, int width, float[] into) {
        backend.readRows(from, rows, width, into);
    }

    @Override
    public boolean samplesOnDevice() {
        return backend.samplesOnDevice();
    }

    @Override
    public int[] sample(ActivationBuffer logits, int n, int vocab, double[] parameters) {
        return backend.sample(logits, n, vocab, parameters);
    }

    @Override
    public void reluSquaredGlu(ActivationBuffer gate, ActivationBuffer up, int length) {
        timed("relu2", () -> backend.reluSquaredGlu(gate, up, length));
    }

    @Override
    public void embed(WeightMatrix table, int[] tokens, ActivationBuffer out) {
        timed("embed", () -> backend.embed(table, tokens, out));
    }

    @Override
    public void add(ActivationBuffer x, ActivationBuffer y, int length) {
        timed("add", () -> backend.add(x, y, length));
    }

    @Override
    public void finish() {
        backend.finish();
    }

    @Override
    public void close() {
        backend.close();
    }
}
