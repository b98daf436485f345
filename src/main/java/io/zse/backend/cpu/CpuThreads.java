package io.zse.backend.cpu;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** A fixed pool of worker threads and the one {@link #parallelFor} every CPU kernel splits its work with. */
public final class CpuThreads implements AutoCloseable {
    /** Below this many multiply-adds a task runs on the caller: handing it to the pool would cost more. */
    private static final long MIN_PARALLEL_WORK = 1 << 15;

    /** The body of a parallel loop: handles items [start, end). */
    @FunctionalInterface
    public interface Range {
        void run(int start, int end);
    }

    private final int threads;
    private final ExecutorService pool;

    public CpuThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, not " + threads);
        }
        this.threads = threads;
        this.pool = threads == 1 ? null : Executors.newFixedThreadPool(threads - 1, r -> {
            Thread t = new Thread(r, "zse-cpu");
            t.setDaemon(true);
            return t;
        });
    }

    /** The {@code zse.threads} system property, else every available core. */
    public static int defaultThreads() {
        return Integer.getInteger("zse.threads", Runtime.getRuntime().availableProcessors());
    }

    public int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over [0, count) in contiguous chunks, one per thread, the caller taking the last chunk; returns
     * when all are done. {@code workPerItem} (multiply-adds, roughly) decides whether splitting is worth it.
     */
    public void parallelFor(int count, long workPerItem, Range body) {
        int chunks = (int) Math.min(Math.min(threads, count), Math.max(1, count * workPerItem / MIN_PARALLEL_WORK));
        if (chunks <= 1) {
            body.run(0, count);
            return;
        }
        List<Future<?>> running = new ArrayList<>(chunks - 1);
        for (int c = 0; c < chunks - 1; c++) {
            int start = chunkStart(c, chunks, count);
            int end = chunkStart(c + 1, chunks, count);
            running.add(pool.submit(() -> body.run(start, end)));
        }
        body.run(chunkStart(chunks - 1, chunks, count), count);
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for CPU workers", e);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
            }
        }
    }

    private static int chunkStart(int chunk, int chunks, int count) {
        return (int) ((long) count * chunk / chunks);
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
