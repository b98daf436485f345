package io.zse.backend.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * A STREAM-like read kernel: sums a buffer far larger than the caches with the same thread split the matmul kernels
 * use. Its rate is the roofline for decoding, which must read every weight once per token.
 */
public final class ReadBandwidth {
    private ReadBandwidth() {
    }

    /**
     * Best bytes per second over {@code repeats} full reads of a buffer of {@code bytes} (a multiple of 4 KiB),
     * split over the threads of {@code threads}.
     */
    public static double measure(CpuThreads threads, long bytes, int repeats) {
        long blocks = bytes / BLOCK;
        if (blocks < threads.threads() || blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("buffer of " + bytes + " bytes: too small or too large");
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(blocks * BLOCK, 64);
            buffer.fill((byte) 1); // touch every page so the timing sees memory, not page faults
            double best = 0;
            float[] sink = new float[1];
            for (int r = 0; r < repeats; r++) {
                long start = System.nanoTime();
                threads.parallelFor((int) blocks, BLOCK, (first, end) -> {
                    float s = sum(buffer, first * (long) BLOCK, (end - first) * (long) BLOCK);
                    synchronized (sink) {
                        sink[0] += s;
                    }
                });
                best = Math.max(best, blocks * (double) BLOCK / ((System.nanoTime() - start) / 1e9));
            }
            if (Float.isNaN(sink[0])) { // keeps the sums observable so the JIT cannot drop them
                throw new IllegalStateException("NaN in the bandwidth buffer");
            }
            return best;
        }
    }

    private static final int BLOCK = 4096;

    /** Sums the floats of [offset, offset + length) with four independent accumulators (one per load port slot). */
    private static float sum(MemorySegment buffer, long offset, long length) {
        var species = Matmul.FLOATS;
        long step = species.vectorByteSize();
        FloatVector a = FloatVector.zero(species);
        FloatVector b = a;
        FloatVector c = a;
        FloatVector d = a;
        for (long p = offset, end = offset + length; p < end; p += 4 * step) {
            a = a.add(FloatVector.fromMemorySegment(species, buffer, p, ByteOrder.LITTLE_ENDIAN));
            b = b.add(FloatVector.fromMemorySegment(species, buffer, p + step, ByteOrder.LITTLE_ENDIAN));
            c = c.add(FloatVector.fromMemorySegment(species, buffer, p + 2 * step, ByteOrder.LITTLE_ENDIAN));
            d = d.add(FloatVector.fromMemorySegment(species, buffer, p + 3 * step, ByteOrder.LITTLE_ENDIAN));
        }
        return a.add(b).add(c).add(d).reduceLanes(VectorOperators.ADD);
    }
}
