import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * How fast a file in the page cache gets into native staging buffers, as the CUDA weight upload's lanes fill their
 * pinned buffers: 16 MB chunks dealt to THREADS threads, each with its own buffer, by copying out of a fresh mapping of
 * the file (every page faulted in on first touch) or by positional reads of the open file. Interleaved rounds, GB/s.
 *
 * Usage: java bench/StagingCopy.java FILE [THREADS] [ROUNDS]   (warm the page cache first: cat FILE > /dev/null)
 */
public final class StagingCopy {
    private static final long CHUNK = 16L << 20;

    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        System.out.printf("%s, %d threads, 16 MB chunks%n%-6s %14s %14s%n", path, threads, "round", "mapping GB/s",
                "reads GB/s");
        for (int round = 1; round <= rounds; round++) {
            System.out.printf("%-6d %14.2f %14.2f%n", round, rate(path, threads, false), rate(path, threads, true));
        }
    }

    private static double rate(Path path, int threads, boolean reads) throws Exception {
        try (FileChannel file = FileChannel.open(path); Arena arena = Arena.ofShared()) {
            long size = file.size();
            MemorySegment mapping = file.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            MemorySegment[] staging = new MemorySegment[threads];
            for (int t = 0; t < threads; t++) {
                staging[t] = arena.allocate(CHUNK, 4096);
                staging[t].fill((byte) 1); // resident, as pinned memory is
            }
            long chunks = (size + CHUNK - 1) / CHUNK;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            long start = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int lane = t;
                done.add(pool.submit(() -> {
                    for (long c = lane; c < chunks; c += threads) {
                        long at = c * CHUNK;
                        long length = Math.min(CHUNK, size - at);
                        if (reads) {
                            ByteBuffer into = staging[lane].asSlice(0, length).asByteBuffer();
                            while (into.hasRemaining()) {
                                if (file.read(into, at + into.position()) < 0) {
                                    throw new IllegalStateException("the file ended early");
                                }
                            }
                        } else {
                            MemorySegment.copy(mapping, at, staging[lane], 0, length);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            pool.shutdown();
            return size / seconds / 1e9;
        }
    }
}
