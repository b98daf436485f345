package io.zse.serve;

import io.zse.format.TensorChecksumException;
import io.zse.format.ZseFile;
import io.zse.format.ZseFormatException;

import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Checks every tensor checksum of a served model's file ({@link ZseFile#verify}), either on the caller's thread
 * before the model is ready, or afterwards on one daemon thread of minimum priority that gives way to requests.
 * {@link #close} stops that thread and waits for it, so the file can be unmapped right after.
 */
public final class WeightVerifier implements AutoCloseable {
    /**
     * While requests are in flight the background check reads one chunk ({@link ZseFile#VERIFY_CHUNK_BYTES}) per
     * pause: about 20 MiB/s, a fraction of a percent of one core, so it cannot slow a decode step that needs them all
     * (thread priorities alone do nothing on Linux).
     */
    private static final long BUSY_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Where a verification stands. */
    public sealed interface Status {
        /** One line for the health payload and logs. */
        String summary();
    }

    public record NotStarted() implements Status {
        public String summary() {
            return "not checked";
        }
    }

    public record Running(long bytesChecked, long bytesTotal) implements Status {
        public String summary() {
            return "checking: " + bytesChecked + " of " + bytesTotal + " bytes";
        }
    }

    public record Ok(long bytes, long millis) implements Status {
        public String summary() {
            return "ok";
        }
    }

    /**
     * @param tensor the damaged tensor; null when the damage lies in padding between tensors
     * @param message the file, the part and the stored versus computed checksum
     */
    public record Failed(String tensor, int expectedCrc, int actualCrc, String message) implements Status {
        public String summary() {
            return "corrupt";
        }
    }

    public record Cancelled(long bytesChecked) implements Status {
        public String summary() {
            return "cancelled";
        }
    }

    private final ZseFile file;
    private final BooleanSupplier requestsInFlight;
    private final AtomicReference<Status> status = new AtomicReference<>(new NotStarted());
    private volatile boolean cancelled;
    private Thread thread; // guarded by this

    /** @param requestsInFlight whether requests are being served, so the background check gives way */
    public WeightVerifier(ZseFile file, BooleanSupplier requestsInFlight) {
        this.file = file;
        this.requestsInFlight = requestsInFlight;
    }

    public Status status() {
        return status.get();
    }

    /** Verifies on the calling thread at full speed; the final status. */
    public Status verifyNow() {
        return run(false);
    }

    /**
     * Starts verifying on a daemon thread of minimum priority; {@code onDone} gets the final status unless
     * {@link #close} cancelled it. Does nothing once closed or started.
     */
    public synchronized void startInBackground(Consumer<Status> onDone) {
        if (cancelled || thread != null) {
            return;
        }
        thread = Thread.ofPlatform().name("zse-weight-verifier").daemon().priority(Thread.MIN_PRIORITY).start(() -> {
            Status end = run(true);
            if (!(end instanceof Cancelled)) {
                onDone.accept(end);
            }
        });
    }

    private Status run(boolean giveWayToRequests) {
        long total = file.dataLength();
        long start = System.nanoTime();
        status.set(new Running(0, total));
        Status end;
        try {
            file.verify(checked -> {
                if (cancelled) {
                    throw new CancellationException();
                }
                status.set(new Running(checked, total));
                if (giveWayToRequests) {
                    giveWay();
                }
            });
            end = new Ok(total, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } catch (CancellationException e) {
            end = new Cancelled(status.get() instanceof Running r ? r.bytesChecked() : 0);
        } catch (TensorChecksumException e) {
            end = new Failed(e.tensor(), e.expected(), e.actual(), e.getMessage());
        } catch (ZseFormatException e) {
            end = new Failed(null, 0, 0, e.getMessage());
        } catch (InternalError e) {
            // how the JVM raises SIGBUS in Java code: a read past the end of a file that shrank after it was mapped
            end = new Failed(null, 0, 0, file.shrunk().orElseThrow(() -> e));
        }
        status.set(end);
        return end;
    }

    private void giveWay() {
        Thread.yield();
        if (requestsInFlight.getAsBoolean()) {
            LockSupport.parkNanos(BUSY_PAUSE_NANOS);
        }
    }

    /** Cancels a background check and waits until its thread has stopped reading the file. */
    @Override
    public void close() {
        Thread running;
        synchronized (this) {
            cancelled = true;
            running = thread;
        }
        if (running == null) {
            return;
        }
        LockSupport.unpark(running);
        boolean interrupted = false;
        while (running.isAlive()) {
            try {
                running.join();
            } catch (InterruptedException e) {
                interrupted = true; // keep waiting: the file must not be unmapped under the reader
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
