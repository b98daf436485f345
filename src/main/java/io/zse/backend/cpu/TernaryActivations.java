package io.zse.backend.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * Activation rows as BitNet b1.58's BitLinear quantizes them before every product with a {@code TERNARY} weight: per
 * row, int8 codes q = round-half-even(x · d) clamped to [-128, 127], where the row's divisor d = 127 / max(absmax, 1e-5)
 * in float (transformers' {@code activation_quant}), and the sum of the row's codes (the native kernels multiply
 * unsigned weight codes c = t + 1, so they subtract it). A product is then
 * {@code y = Σ t·q · s / d} with s the weight's scale. Off-heap (codes int8, divisors F32, sums int32) so the native
 * kernels get their addresses. Grow-only: one per thread, reused by every product it runs, in an automatic arena like
 * {@link QuantizedRows}.
 */
record TernaryActivations(MemorySegment codes, MemorySegment divisors, MemorySegment sums, int elements, int rows) {
    private static final ThreadLocal<TernaryActivations> PER_THREAD = ThreadLocal.withInitial(() -> allocate(0, 0));

    private static TernaryActivations allocate(int elements, int rows) {
        Arena arena = Arena.ofAuto();
        return new TernaryActivations(arena.allocate(Math.max(1, elements), 64),
                arena.allocate(Math.max(1, rows) * (long) Float.BYTES, 64),
                arena.allocate(Math.max(1, rows) * (long) Integer.BYTES, 64), elements, rows);
    }

    /**
     * Quantizes x[n, cols] (F32 activations from float xOffset) into this thread's buffer; its contents are
     * overwritten by the next call on the thread.
     */
    static TernaryActivations quantize(MemorySegment x, long xOffset, int n, int cols) {
        TernaryActivations q = PER_THREAD.get();
        int elements = Math.multiplyExact(n, cols);
        if (q.elements < elements || q.rows < n) {
            q = allocate(Math.max(elements, q.elements), Math.max(n, q.rows));
            PER_THREAD.set(q);
        }
        for (int i = 0; i < n; i++) {
            long row = xOffset + (long) i * cols;
            float absmax = 0;
            for (int k = 0; k < cols; k++) {
                absmax = Math.max(absmax, Math.abs(x.getAtIndex(FLOAT, row + k)));
            }
            float divisor = 127f / Math.max(absmax, 1e-5f);
            int sum = 0;
            for (int k = 0; k < cols; k++) {
                int code = (int) Math.max(-128, Math.min(127, Math.rint(x.getAtIndex(FLOAT, row + k) * divisor)));
                q.codes.set(ValueLayout.JAVA_BYTE, (long) i * cols + k, (byte) code);
                sum += code;
            }
            q.divisors.setAtIndex(FLOAT, i, divisor);
            q.sums.setAtIndex(ValueLayout.JAVA_INT, i, sum);
        }
        return q;
    }

    /** The product of activation row i with a weight row, from Σ t·q over the row (exact) and the weight's scale. */
    float output(int i, float codeDot, float scale) {
        return codeDot * scale / divisors.getAtIndex(FLOAT, i);
    }
}
