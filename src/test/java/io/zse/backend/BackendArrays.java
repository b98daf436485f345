package io.zse.backend;

/**
 * Backend ops on host arrays, for tests: inputs are written to fresh activations, the result is read back. Inputs are
 * closed after their op, never left to the garbage collector: a buffer nothing refers to any more may be freed by its
 * cleaner while the op's threads still read its memory.
 */
public final class BackendArrays {
    private BackendArrays() {
    }

    private static ActivationBuffer on(Backend b, float[] values) {
        ActivationBuffer buffer = b.allocate(values.length);
        b.write(values, buffer);
        return buffer;
    }

    private static float[] read(Backend b, ActivationBuffer buffer, int count) {
        float[] out = new float[count];
        b.read(buffer, out, count);
        buffer.close();
        return out;
    }

    public static float[] matmul(Backend b, float[] x, int n, WeightMatrix w) {
        ActivationBuffer out = b.allocate((long) n * w.rows());
        try (ActivationBuffer in = on(b, x)) {
            b.matmul(in, n, w, out);
        }
        return read(b, out, n * w.rows());
    }

    /** The products of x with each of ws through one {@link Backend#matmuls} call. */
    public static float[][] matmuls(Backend b, float[] x, int n, WeightMatrix... ws) {
        ActivationBuffer[] outs = new ActivationBuffer[ws.length];
        for (int j = 0; j < ws.length; j++) {
            outs[j] = b.allocate((long) n * ws[j].rows());
        }
        try (ActivationBuffer in = on(b, x)) {
            b.matmuls(in, n, ws, outs);
        }
        float[][] results = new float[ws.length][];
        for (int j = 0; j < ws.length; j++) {
            results[j] = read(b, outs[j], n * ws[j].rows());
        }
        return results;
    }

    public static float[] embed(Backend b, WeightMatrix table, int[] tokens) {
        ActivationBuffer out = b.allocate((long) tokens.length * table.cols());
        b.embed(table, tokens, out);
        return read(b, out, tokens.length * table.cols());
    }

    public static float[] rmsNorm(Backend b, float[] x, int n, float[] weight, float eps) {
        ActivationBuffer out = b.allocate(x.length);
        try (ActivationBuffer in = on(b, x)) {
            b.rmsNorm(in, n, weight, eps, out);
        }
        return read(b, out, x.length);
    }

    public static float[] rope(Backend b, float[] x, BatchLayout batch, int heads, int headDim, float[] frequencies) {
        ActivationBuffer rows = on(b, x);
        b.rope(rows, batch, heads, headDim, frequencies);
        return read(b, rows, x.length);
    }

    /** rmsNorm with x as its own output, as Qwen3 normalises each head of q and k. */
    public static float[] rmsNormInPlace(Backend b, float[] x, int n, float[] weight, float eps) {
        ActivationBuffer rows = on(b, x);
        b.rmsNorm(rows, n, weight, eps, rows);
        return read(b, rows, x.length);
    }

    /** Rows bounds[r]..bounds[r + 1]-1 rotated with tables[r], one rope call per run (as LongRoPE rotates a batch). */
    public static float[] ropeInRuns(Backend b, float[] x, BatchLayout batch, int heads, int headDim, int[] bounds,
                                     float[][] tables) {
        ActivationBuffer rows = on(b, x);
        for (int r = 0; r < tables.length; r++) {
            b.rope(rows, batch, bounds[r], bounds[r + 1], heads, headDim, tables[r]);
        }
        return read(b, rows, x.length);
    }

    public static float[] swiglu(Backend b, float[] gate, float[] up) {
        ActivationBuffer g = on(b, gate);
        try (ActivationBuffer u = on(b, up)) {
            b.swiglu(g, u, gate.length);
        }
        return read(b, g, gate.length);
    }

    public static float[] add(Backend b, float[] x, float[] y) {
        ActivationBuffer sum = on(b, x);
        try (ActivationBuffer in = on(b, y)) {
            b.add(sum, in, x.length);
        }
        return read(b, sum, x.length);
    }

    public static float[] scale(Backend b, float[] x, float factor) {
        ActivationBuffer scaled = on(b, x);
        b.scale(scaled, x.length, factor);
        return read(b, scaled, x.length);
    }

    /** addRmsNorm: returns [x after the add | the normed rows]. */
    public static float[] addRmsNorm(Backend b, float[] x, float[] y, int n, float[] weight, float eps) {
        ActivationBuffer sum = on(b, x);
        ActivationBuffer out = b.allocate(x.length);
        try (ActivationBuffer in = on(b, y)) {
            b.addRmsNorm(sum, in, n, weight, eps, out);
        }
        float[] both = new float[2 * x.length];
        System.arraycopy(read(b, sum, x.length), 0, both, 0, x.length);
        System.arraycopy(read(b, out, x.length), 0, both, x.length, x.length);
        return both;
    }

    /** Stores k rotated and v through ropeStoreKv (the caches get what rope then storeKv would give them). */
    public static void ropeStoreKv(Backend b, float[] k, float[] v, BatchLayout batch, int layer, int kvHeads,
                                   int headDim, float[] frequencies) {
        try (ActivationBuffer keys = on(b, k); ActivationBuffer values = on(b, v)) {
            b.ropeStoreKv(keys, values, batch, layer, kvHeads, headDim, frequencies);
        }
    }

    /** ropeQueriesAndStoreKv: k rotated and v into the caches as ropeStoreKv; returns q rotated. */
    public static float[] ropeQueriesAndStoreKv(Backend b, float[] q, int heads, float[] k, float[] v,
                                                BatchLayout batch, int layer, int kvHeads, int headDim,
                                                float[] frequencies) {
        ActivationBuffer queries = on(b, q);
        try (ActivationBuffer keys = on(b, k); ActivationBuffer values = on(b, v)) {
            b.ropeQueriesAndStoreKv(queries, heads, keys, values, batch, layer, kvHeads, headDim, frequencies);
        }
        return read(b, queries, q.length);
    }

    public static float[] addBias(Backend b, float[] x, int n, float[] bias) {
        ActivationBuffer rows = on(b, x);
        b.addBias(rows, n, bias);
        return read(b, rows, x.length);
    }

    /** Stores rows of k and v [batch rows, kvDim] through the backend (where it keeps the pool's memory). */
    public static void storeKv(Backend b, float[] k, float[] v, BatchLayout batch, int layer) {
        try (ActivationBuffer keys = on(b, k); ActivationBuffer values = on(b, v)) {
            b.storeKv(keys, values, batch, layer);
        }
    }

    public static float[] attention(Backend b, float[] q, BatchLayout batch, int layer, AttentionShape shape) {
        ActivationBuffer out = b.allocate(q.length);
        try (ActivationBuffer queries = on(b, q)) {
            b.attention(queries, batch, layer, shape, out);
        }
        return read(b, out, q.length);
    }
}
