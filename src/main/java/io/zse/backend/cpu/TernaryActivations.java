package io.zse.backend.cpu;

/**
 * Activation rows as BitNet b1.58's BitLinear quantizes them before every product with a {@code TERNARY} weight: per
 * row, int8 codes q = round-half-even(x · d) clamped to [-128, 127], where the row's divisor d = 127 / max(absmax, 1e-5)
 * in float (transformers' {@code activation_quant}), and the sum of the row's codes (the native kernels multiply
 * unsigned weight codes c = t + 1, so they subtract it). A product is then
 * {@code y = Σ t·q · s / d} with s the weight's scale. Grow-only: one per thread, reused by every product it runs.
 */
record TernaryActivations(byte[] codes, float[] divisors, int[] sums) {
    private static final ThreadLocal<TernaryActivations> PER_THREAD =
            ThreadLocal.withInitial(() -> new TernaryActivations(new byte[0], new float[0], new int[0]));

    /** Quantizes x[n, cols] into this thread's buffer; its contents are overwritten by the next call on the thread. */
    static TernaryActivations quantize(float[] x, int xOffset, int n, int cols) {
        TernaryActivations q = PER_THREAD.get();
        if (q.codes.length < n * cols || q.divisors.length < n) {
            q = new TernaryActivations(new byte[Math.max(n * cols, q.codes.length)], new float[Math.max(n, q.divisors.length)],
                    new int[Math.max(n, q.divisors.length)]);
            PER_THREAD.set(q);
        }
        for (int i = 0; i < n; i++) {
            int row = xOffset + i * cols;
            float absmax = 0;
            for (int k = 0; k < cols; k++) {
                absmax = Math.max(absmax, Math.abs(x[row + k]));
            }
            float divisor = 127f / Math.max(absmax, 1e-5f);
            int sum = 0;
            for (int k = 0; k < cols; k++) {
                int code = (int) Math.max(-128, Math.min(127, Math.rint(x[row + k] * divisor)));
                q.codes[i * cols + k] = (byte) code;
                sum += code;
            }
            q.divisors[i] = divisor;
            q.sums[i] = sum;
        }
        return q;
    }

    /** The product of activation row i with a weight row, from Σ t·q over the row (exact) and the weight's scale. */
    float output(int i, float codeDot, float scale) {
        return codeDot * scale / divisors[i];
    }
}
