package io.zse.convert;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs chunk jobs on every core while the calling thread consumes their results in submission order: the reading and
 * quantizing of later chunks overlaps the writing of earlier ones. At most {@code inFlight} chunks exist at once, each
 * in one of as many reusable buffers, so memory stays bounded whatever the model size.
 *
 * @param <B> a chunk's buffers
 */
final class ChunkPipeline<B> implements AutoCloseable {
    /** Fills a buffer (on a worker). */
    interface Job<B> {
        void run(B buffer) throws IOException;
    }

    /** Takes a filled buffer (on the submitting thread, in submission order). */
    interface Consumer<B> {
        void accept(B buffer) throws IOException;
    }

    private record Pending<B>(Future<B> result, Consumer<B> consumer) {
    }

    private final ExecutorService workers;
    private final ArrayDeque<B> free = new ArrayDeque<>();
    private final ArrayDeque<Pending<B>> pending = new ArrayDeque<>();

    ChunkPipeline(int threads, int inFlight, java.util.function.Supplier<B> buffers) {
        AtomicInteger next = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "zse-convert-" + next.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        for (int i = 0; i < inFlight; i++) {
            free.add(buffers.get());
        }
    }

    /** Queues {@code job}; {@code consumer} gets its buffer after every earlier job's consumer ran. */
    void submit(Job<B> job, Consumer<B> consumer) throws IOException {
        while (free.isEmpty()) {
            consumeOldest();
        }
        B buffer = free.poll();
        Future<B> result = workers.submit(() -> {
            job.run(buffer);
            return buffer;
        });
        pending.add(new Pending<>(result, consumer));
    }

    /** Consumes every queued chunk. */
    void drain() throws IOException {
        while (!pending.isEmpty()) {
            consumeOldest();
        }
    }

    private void consumeOldest() throws IOException {
        Pending<B> oldest = pending.poll();
        B buffer;
        try {
            buffer = oldest.result().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while converting", e);
        } catch (ExecutionException e) {
            throw rethrow(e.getCause());
        }
        oldest.consumer().accept(buffer);
        free.add(buffer);
    }

    private static IOException rethrow(Throwable cause) {
        return switch (cause) {
            case IOException io -> io;
            case UncheckedIOException io -> io.getCause();
            case RuntimeException r -> throw r;
            case Error e -> throw e;
            default -> new IOException(cause);
        };
    }

    /** Stops the workers and waits for them, so no job still reads a buffer or a mapping its caller releases. */
    @Override
    public void close() {
        pending.forEach(p -> p.result().cancel(false));
        workers.shutdown();
        boolean interrupted = false;
        while (true) {
            try {
                if (workers.awaitTermination(1, TimeUnit.MINUTES)) {
                    break;
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
