package io.zse.format;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Asks the kernel to read a mapped file into the page cache, on a thread of its own, while the process goes on
 * starting: where the file is not cached (a fresh pod reading its volume), the weights then come off the disk in large
 * requests issued back to back, not one page fault's readahead at a time when a forward pass or an upload lane first
 * touches them. The kernel reads the pages in the background ({@code madvise(MADV_WILLNEED)} only queues the reads)
 * and never maps them into the process. Measured on a 2-core VM whose disk reads a cold file at 0.81 GB/s with {@code
 * read()}: an 838 MB file was all cached 0.55 s after the first advice, the advice itself taking 0.12 s to issue. A
 * file cached already is found so by sampling its pages (mincore) and left alone.
 *
 * <p>Some small ranges go first (a model's norms, which loading it reads at once, spread over the file: behind the
 * rest of the file's reads they held the load of a 1B model until 890 ms after start against 610 without any
 * readahead; first, 390), then the rest from an offset in file order. One call reads at most the device's readahead
 * limit (8 MiB on that VM, 128 KiB by default on some kernels), so the advice goes {@value #CHUNK_BYTES} bytes at a
 * time. It stops at a budget of half the memory the kernel says is free (and half of what the cgroup has left, where
 * it has a limit), so that a file larger than memory does not push its own first pages out before they are used.
 * Linux only; ZSE_READAHEAD=off turns it off.
 */
final class PageCacheReadahead {
    static final long CHUNK_BYTES = 512L << 10;
    private static final int MADV_WILLNEED = 3;
    // madvise takes page-aligned addresses: an early range from a multiple of the largest page size Linux uses (arm64:
    // 64 KiB) below it, or from the mapping's start (aligned to the pages of its kernel)
    private static final long ALIGNMENT = 64 << 10;
    private static final int SAMPLES = 64;
    private static final long SAMPLE_BYTES = 4096;
    private static final boolean LINUX = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");

    private final Thread thread;
    private volatile boolean stopped;
    private volatile long doneBytes;  // of the range from the offset: advised so far, or all where it was cached

    private PageCacheReadahead(long mapped, MemorySegment range, List<MemorySegment> early) {
        thread = Thread.ofPlatform().name("zse-readahead").daemon().start(() -> advise(mapped, range, early));
    }

    /**
     * Starts reading the ranges {@code early} (slices of the mapping), then bytes {@code [from, mapping.byteSize())}
     * of {@code mapping} (a file's mapping), up to {@code budget} bytes of those, ahead; empty where there is nothing
     * to do or no way to do it.
     */
    static Optional<PageCacheReadahead> start(MemorySegment mapping, long from, long budget,
                                              List<MemorySegment> early) {
        long first = from / CHUNK_BYTES * CHUNK_BYTES;
        long bytes = Math.min(mapping.byteSize() - first, budget);
        if (!LINUX || bytes <= 0 || !enabled(System.getenv("ZSE_READAHEAD"))) {
            return Optional.empty();
        }
        return Optional.of(new PageCacheReadahead(mapping.address(), mapping.asSlice(first, bytes), early));
    }

    /** ZSE_READAHEAD: on (also unset) or off; anything else refused. */
    static boolean enabled(String value) {
        if (value == null || value.equals("on")) {
            return true;
        }
        if (value.equals("off")) {
            return false;
        }
        throw new IllegalArgumentException("ZSE_READAHEAD must be on or off, not '" + value + "'");
    }

    /**
     * On the thread: nothing where the range looks cached already (cached()); otherwise binds madvise (the first
     * downcall a JVM binds took 70 ms of CPU on a 2-core VM, which a cached file need not spend) and advises the early
     * ranges, then the range chunk after chunk. (close() waits for this thread before it unmaps the file.)
     */
    private void advise(long mapped, MemorySegment range, List<MemorySegment> early) {
        if (cached(range)) {
            doneBytes = range.byteSize();
            return;
        }
        MethodHandle madvise = madvise();
        if (madvise == null) {
            return;
        }
        for (MemorySegment e : early) {
            if (stopped) {
                return;
            }
            long start = Math.max(mapped, e.address() / ALIGNMENT * ALIGNMENT);
            willNeed(madvise, start, e.address() + e.byteSize() - start);
        }
        long bytes = range.byteSize();
        for (long at = 0; at < bytes && !stopped; at += CHUNK_BYTES) {
            long length = Math.min(CHUNK_BYTES, bytes - at);
            if (!willNeed(madvise, range.address() + at, length)) {
                return; // advice only: a kernel that refuses it reads the pages on first touch as before
            }
            doneBytes = at + length;
        }
    }

    /** madvise(WILLNEED) of {@code [address, address + length)} (address page-aligned); false where refused. */
    private static boolean willNeed(MethodHandle madvise, long address, long length) {
        try {
            // the address, not a slice: a slice would take the file's shared arena for the call
            return (int) madvise.invokeExact(MemorySegment.ofAddress(address), length, MADV_WILLNEED) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * Whether {@value #SAMPLES} pages spread evenly over the range are all in the page cache (mincore): a file read
     * lately, or not. All of an 838 MB file's pages took 10-14 ms to ask about (2-core VM), more than advising them
     * all when cached (6 ms).
     */
    static boolean cached(MemorySegment range) {
        long step = Math.max(SAMPLE_BYTES, range.byteSize() / SAMPLES);
        for (long at = 0; at < range.byteSize(); at += step) {
            if (!range.asSlice(at, Math.min(SAMPLE_BYTES, range.byteSize() - at)).isLoaded()) {
                return false;
            }
        }
        return true;
    }

    /** Bytes advised so far, or all where the range was cached (tests). */
    long doneBytes() {
        return doneBytes;
    }

    /** Waits until every chunk has been advised (tests). */
    void join() throws InterruptedException {
        thread.join();
    }

    /** Stops after the chunk being advised: the mapping may be unmapped once this returns. */
    void stop() {
        stopped = true;
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the thread must end before the mapping goes
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Half the memory the kernel reports available ({@code MemAvailable}), and at most half of what this process's
     * cgroup (v2) has left below its limit; 0 where neither can be read.
     */
    static long budget(Path meminfo, Path cgroupMax, Path cgroupCurrent) {
        OptionalLong available = memAvailable(meminfo);
        if (available.isEmpty()) {
            return 0;
        }
        long budget = available.getAsLong() / 2;
        OptionalLong max = number(cgroupMax);
        OptionalLong current = number(cgroupCurrent);
        if (max.isPresent() && current.isPresent()) {
            budget = Math.min(budget, Math.max(0, max.getAsLong() - current.getAsLong()) / 2);
        }
        return budget;
    }

    /** This machine's budget (Linux's files; 0 elsewhere). */
    static long budget() {
        return budget(Path.of("/proc/meminfo"), Path.of("/sys/fs/cgroup/memory.max"),
                Path.of("/sys/fs/cgroup/memory.current"));
    }

    private static OptionalLong memAvailable(Path meminfo) {
        try {
            for (String line : Files.readAllLines(meminfo)) {
                if (line.startsWith("MemAvailable:")) {
                    String[] parts = line.substring("MemAvailable:".length()).trim().split("\\s+");
                    return OptionalLong.of(Long.parseLong(parts[0]) * 1024); // kB
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable: no budget
        }
        return OptionalLong.empty();
    }

    /** A file holding one number (a cgroup's memory.max is "max" where unlimited: empty). */
    private static OptionalLong number(Path file) {
        try {
            return OptionalLong.of(Long.parseLong(Files.readString(file).trim()));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    private static MethodHandle madvise() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(linker.defaultLookup().find("madvise").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT));
        } catch (RuntimeException | Error e) {
            return null; // no native access (a restricted JVM): pages are read on first touch
        }
    }
}
