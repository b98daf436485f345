package io.zse.backend.cpu;

import io.zse.backend.KvRows;

import java.lang.foreign.MemorySegment;

/**
 * The two products attention takes with one head's row of a {@link KvRows}, for every storage type, reading the
 * stored elements in place (no decoded copy of the cache). INT8 rows are scaled once per head row:
 * q·k = scale · Σ q·code, and out += (p · scale) · code.
 */
public sealed interface KvRowProducts permits ScalarKvRowProducts, VectorKvRowProducts {

    /** Σ q[qOffset + i] · row[slot, headOffset + i] for i < headDim; q F32 activations, offsets in floats. */
    float dot(KvRows rows, int slot, int headOffset, MemorySegment q, long qOffset, int headDim);

    /** out[outOffset + i] += p · row[slot, headOffset + i] for i < headDim; out F32 activations. */
    void accumulate(KvRows rows, int slot, int headOffset, float p, MemorySegment out, long outOffset, int headDim);
}
