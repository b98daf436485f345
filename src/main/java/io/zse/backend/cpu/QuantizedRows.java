package io.zse.backend.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Activation rows quantized for the native integer kernels: int8 codes per block of 32 with the block's F32 scale
 * d and its sum d·Σcodes (which Q4's offset term needs), off-heap so the kernels get their addresses. Grow-only: one
 * per thread, reused by every product it runs; a smaller one it replaces, and the last one when its thread is gone,
 * is freed by the garbage collector (its arena is automatic).
 */
record QuantizedRows(MemorySegment codes, MemorySegment scales, MemorySegment sums, int elements) {
    static final int BLOCK = 32;

    private static final ThreadLocal<QuantizedRows> PER_THREAD = ThreadLocal.withInitial(() -> allocate(0));

    private static QuantizedRows allocate(int elements) {
        Arena arena = Arena.ofAuto();
        long blocks = elements / BLOCK;
        long blockBytes = Math.max(1, blocks) * Float.BYTES;
        return new QuantizedRows(arena.allocate(Math.max(1, elements), 64), arena.allocate(blockBytes, 64),
                arena.allocate(blockBytes, 64), elements);
    }

    /** This thread's buffer, holding at least {@code elements}; its contents are overwritten by the next quantize. */
    static QuantizedRows forThread(int elements) {
        QuantizedRows rows = PER_THREAD.get();
        if (rows.elements < elements) {
            rows = allocate(elements);
            PER_THREAD.set(rows);
        }
        return rows;
    }
}
