package io.zse.backend.cpu;

import io.zse.backend.ActivationBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Cleaner;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The CPU backend's activations: F32 in native byte order in off-heap memory of their own shared arena (the worker
 * threads read and write them), which every kernel reads and writes in place: the Vector API kernels load and store
 * the segment, the native ones get its address. {@link #close} frees the memory at once; the backend closes what is
 * still open when it closes, and a buffer nobody closed is freed when the garbage collector finds it unreachable.
 */
final class HostActivations implements ActivationBuffer {
    /** An activation element: F32, native order, 4-byte aligned (what every allocation here is). */
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT;
    /** The byte order of activations for the Vector API's segment loads and stores. */
    static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private static final Cleaner UNREACHABLE = Cleaner.create();

    private final MemorySegment data;
    private final Release release;
    private final Cleaner.Cleanable cleanable;

    /**
     * {@code floats} zeroed floats, 64-byte aligned. Its release is in {@code open} until it runs: the owner's list of
     * what to free when it closes (a release holds no reference to the buffer, so the cleaner still sees it go).
     */
    HostActivations(long floats, Set<Runnable> open) {
        Arena arena = Arena.ofShared();
        this.data = arena.allocate(Math.max(1, floats) * Float.BYTES, 64).asSlice(0, floats * Float.BYTES);
        this.release = new Release(arena, open);
        open.add(release);
        this.cleanable = UNREACHABLE.register(this, release);
    }

    /** The floats, [capacity()] F32 in native order; not to be used after {@link #close}. */
    MemorySegment segment() {
        return data;
    }

    /** Whether {@link #close} ran (its memory is gone). */
    boolean closed() {
        return release.done.get();
    }

    @Override
    public long capacity() {
        return data.byteSize() / Float.BYTES;
    }

    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "CPU activations of " + capacity() + " floats at 0x" + Long.toHexString(data.address())
                + (closed() ? " (closed)" : "");
    }

    /** Closes the arena once, from close(), the owner's close or the cleaner (identity equality: its own entry). */
    private static final class Release implements Runnable {
        private final Arena arena;
        private final Set<Runnable> open;
        private final AtomicBoolean done = new AtomicBoolean();

        Release(Arena arena, Set<Runnable> open) {
            this.arena = arena;
            this.open = open;
        }

        @Override
        public void run() {
            if (done.compareAndSet(false, true)) {
                open.remove(this);
                try {
                    arena.close();
                } catch (IllegalStateException e) { // a native call still holds it: not freed, so still open
                    done.set(false);
                    open.add(this);
                    throw e;
                }
            }
        }
    }
}
