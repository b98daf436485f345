package io.zse.backend.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A STREAM-like read kernel: sums a buffer far larger than the caches with the same thread split the matmul kernels
 * use. Its rate is the roofline for decoding, which must read every weight once per token.
 */
public final class ReadBandwidth {
    private static final int BLOCK = 4096;

    private ReadBandwidth() {
    }

    /**
     * Best bytes per second over {@code repeats} full reads of a buffer of {@code bytes} (a multiple of 4 KiB),
     * split over the threads of {@code threads}, each reading with {@link CpuKernels#readAll}.
     */
    public static double measure(CpuThreads threads, CpuKernels kernels, long bytes, int repeats) {
        long blocks = bytes / BLOCK;
        if (blocks < threads.threads() || blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("buffer of " + bytes + " bytes: too small or too large");
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(blocks * BLOCK, 64);
            buffer.fill((byte) 1); // touch every page so the timing sees memory, not page faults
            double best = 0;
            double[] sink = new double[1];
            for (int r = 0; r < repeats; r++) {
                long start = System.nanoTime();
                threads.parallelFor((int) blocks, BLOCK, (first, end) -> {
                    double s = kernels.readAll(buffer, first * (long) BLOCK, (end - first) * (long) BLOCK);
                    synchronized (sink) {
                        sink[0] += s;
                    }
                });
                best = Math.max(best, blocks * (double) BLOCK / ((System.nanoTime() - start) / 1e9));
            }
            if (Double.isNaN(sink[0])) { // keeps the sums observable so the JIT cannot drop them
                throw new IllegalStateException("NaN in the bandwidth buffer");
            }
            return best;
        }
    }
}
