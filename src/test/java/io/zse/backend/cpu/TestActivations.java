package io.zse.backend.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Off-heap F32 activations made from arrays and read back, as the kernels take them ({@link HostActivations}). */
final class TestActivations {
    private TestActivations() {
    }

    /** A copy of {@code values} in memory of {@code arena}, F32 in native order. */
    static MemorySegment of(float[] values, Arena arena) {
        MemorySegment segment = arena.allocate((long) values.length * Float.BYTES, 64);
        MemorySegment.copy(values, 0, segment, HostActivations.FLOAT, 0, values.length);
        return segment;
    }

    static float[] toArray(MemorySegment segment) {
        return segment.toArray(HostActivations.FLOAT);
    }
}
