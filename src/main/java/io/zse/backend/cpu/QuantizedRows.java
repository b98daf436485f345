package io.zse.backend.cpu;

/**
 * Activation rows quantized for the native integer kernels: int8 codes per block of 32 with the block's scale d and
 * its sum d·Σcodes (which Q4's offset term needs). Grow-only: one per thread, reused by every product it runs.
 */
record QuantizedRows(byte[] codes, float[] scales, float[] sums) {
    static final int BLOCK = 32;

    private static final ThreadLocal<QuantizedRows> PER_THREAD = ThreadLocal.withInitial(() -> new QuantizedRows(0));

    private QuantizedRows(int elements) {
        this(new byte[elements], new float[elements / BLOCK], new float[elements / BLOCK]);
    }

    /** This thread's buffer, holding at least {@code elements}; its contents are overwritten by the next quantize. */
    static QuantizedRows forThread(int elements) {
        QuantizedRows rows = PER_THREAD.get();
        if (rows.codes.length < elements) {
            rows = new QuantizedRows(elements);
            PER_THREAD.set(rows);
        }
        return rows;
    }
}
