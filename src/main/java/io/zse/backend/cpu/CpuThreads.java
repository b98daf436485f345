package io.zse.backend.cpu;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/** A fixed pool of worker threads and the one {@link #parallelFor} every CPU kernel splits its work with. */
public final class CpuThreads implements AutoCloseable {
    /** Below this many multiply-adds a task runs on the caller: handing it to the pool would cost more. */
    private static final long MIN_PARALLEL_WORK = 1 << 15;
    /**
     * Chunks per thread in a parallel loop, each no smaller than MIN_PARALLEL_WORK. Decoding is a hundred short loops
     * per token, each ending when its last chunk does: the thread that claims none waits for up to one chunk, so
     * small chunks (tens of microseconds) keep that tail short; claiming one costs one atomic increment.
     */
    private static final int CHUNKS_PER_THREAD = 16;
    /**
     * How long the caller spins for the other threads' last chunks before it parks: longer than a chunk, so the
     * usual wait never pays a park and an unpark (tens of microseconds, more on a busy machine).
     */
    private static final long CALLER_SPIN_NANOS = 100_000;

    /** The body of a parallel loop: handles items [start, end). */
    @FunctionalInterface
    public interface Range {
        void run(int start, int end);
    }

    /** How long a worker keeps polling for its next task before it parks. */
    private static final long WORKER_SPIN_NANOS = 200_000;

    private final int threads;
    private final Worker[] workers;

    public CpuThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, not " + threads);
        }
        this.threads = threads;
        this.workers = new Worker[threads - 1];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Worker();
            workers[w].start();
        }
    }

    /**
     * A helper thread with a one-task slot. After each task it polls the slot for a while before parking: a decode
     * step hands out a hundred parallel loops in quick succession, and waking a parked thread costs tens of
     * microseconds each time. A task left in the slot when the next is handed over is a claim loop whose chunks are
     * all done, so replacing it loses nothing.
     */
    private static final class Worker extends Thread {
        private final AtomicReference<Runnable> slot = new AtomicReference<>();
        private volatile boolean closed;

        Worker() {
            super("zse-cpu");
            setDaemon(true);
        }

        void hand(Runnable task) {
            slot.set(task);
            LockSupport.unpark(this);
        }

        void close() {
            closed = true;
            LockSupport.unpark(this);
        }

        @Override
        public void run() {
            long idleSince = System.nanoTime();
            while (!closed) {
                Runnable task = slot.getAndSet(null);
                if (task != null) {
                    task.run();
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince < WORKER_SPIN_NANOS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.park(this);
                    idleSince = System.nanoTime();
                }
            }
        }
    }

    /** The {@code zse.threads} system property, else every available core. */
    public static int defaultThreads() {
        return Integer.getInteger("zse.threads", Runtime.getRuntime().availableProcessors());
    }

    public int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over [0, count) in contiguous chunks, returning when all are done. {@code workPerItem}
     * (multiply-adds, roughly) decides whether splitting is worth it. There are a few chunks per thread, claimed in
     * turn by whichever thread is free: on a shared machine one core is often slowed for a while, and with one fixed
     * chunk per thread everyone would wait for the slowed one.
     */
    public void parallelFor(int count, long workPerItem, Range body) {
        long worthwhileChunks = Math.max(1, count * workPerItem / MIN_PARALLEL_WORK);
        int helpers = (int) Math.min(Math.min(threads, count), worthwhileChunks) - 1;
        if (helpers <= 0) {
            body.run(0, count);
            return;
        }
        int chunks = (int) Math.min(Math.min(count, worthwhileChunks), (helpers + 1L) * CHUNKS_PER_THREAD);
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread caller = Thread.currentThread();
        Runnable claim = () -> {
            for (int c = next.getAndIncrement(); c < chunks; c = next.getAndIncrement()) {
                try {
                    body.run(chunkStart(c, chunks, count), chunkStart(c + 1, chunks, count));
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
                if (done.incrementAndGet() == chunks) {
                    LockSupport.unpark(caller);
                }
            }
        };
        for (int h = 0; h < helpers; h++) {
            workers[h].hand(claim);
        }
        claim.run();
        awaitChunks(done, chunks);
        Throwable t = failure.get();
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
    }

    /**
     * Waits until every chunk is done; a helper that starts only after the last chunk was claimed is not waited for.
     * A bounded spin first (CALLER_SPIN_NANOS): the last chunk usually ends sooner than a park and unpark would.
     */
    private static void awaitChunks(AtomicInteger done, int chunks) {
        long spinStart = System.nanoTime();
        while (done.get() < chunks && System.nanoTime() - spinStart < CALLER_SPIN_NANOS) {
            Thread.onSpinWait();
        }
        boolean interrupted = false;
        while (done.get() < chunks) {
            LockSupport.park();
            interrupted |= Thread.interrupted(); // the chunks still write the caller's arrays: wait for them anyway
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static int chunkStart(int chunk, int chunks, int count) {
        return (int) ((long) count * chunk / chunks);
    }

    @Override
    public void close() {
        for (Worker worker : workers) {
            worker.close();
        }
    }
}
