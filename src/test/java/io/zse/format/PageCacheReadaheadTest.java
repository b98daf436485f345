package io.zse.format;

import io.zse.TestModels;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Files on disk whose pages this test takes out of the page cache (posix_fadvise DONTNEED, where the file system lets
 * it: not tmpfs), then watches come back (mincore) once read ahead.
 */
class PageCacheReadaheadTest {
    private static final long FILE_BYTES = 48L << 20;
    private static Path dir;
    private static Path raw;

    @BeforeAll
    static void writeFiles() throws IOException {
        assumeTrue(System.getProperty("os.name", "").toLowerCase().contains("linux"), "madvise, mincore: Linux");
        // under target/, on the disk: a temporary folder can be memory (tmpfs), whose pages never leave
        Files.createDirectories(Path.of("target"));
        dir = Files.createTempDirectory(Path.of("target"), "readahead");
        raw = dir.resolve("raw.bin");
        byte[] block = new byte[1 << 20];
        new Random(7).nextBytes(block);
        try (FileChannel out = FileChannel.open(raw, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long at = 0; at < FILE_BYTES; at += block.length) {
                out.write(ByteBuffer.wrap(block));
            }
            out.force(true); // dirty pages would stay in the cache
        }
    }

    @AfterAll
    static void removeFiles() throws IOException {
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @Test
    void aColdFileIsInThePageCacheOnceReadAhead() throws Throwable {
        try (FileChannel channel = FileChannel.open(raw); Arena arena = Arena.ofShared()) {
            MemorySegment mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, FILE_BYTES, arena);
            evict(raw);
            double before = residentShare(mapping);
            assumeTrue(before < 0.1, "the file system kept the file cached (" + before + "): nothing to watch");
            assertTrue(!PageCacheReadahead.cached(mapping), "an evicted file taken for a cached one");
            PageCacheReadahead readahead = PageCacheReadahead.start(mapping, 0, Long.MAX_VALUE, List.of())
                    .orElseThrow();
            readahead.join();
            assertEquals(FILE_BYTES, readahead.doneBytes());
            assertTrue(awaitResident(mapping, 1.0), "resident after the readahead: " + residentShare(mapping));
            assertTrue(PageCacheReadahead.cached(mapping), "a cached file taken for one to read");
        }
    }

    @Test
    void theEarlyRangesTheStartAndTheBudgetBoundWhatIsReadAhead() throws Throwable {
        try (FileChannel channel = FileChannel.open(raw); Arena arena = Arena.ofShared()) {
            MemorySegment mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, FILE_BYTES, arena);
            evict(raw);
            assumeTrue(residentShare(mapping) < 0.1, "the file system kept the file cached");
            long from = 8 * PageCacheReadahead.CHUNK_BYTES + 100; // rounded down to a chunk
            long budget = 3 * PageCacheReadahead.CHUNK_BYTES;
            MemorySegment early = mapping.asSlice((40L << 20) + 100, 8192);
            PageCacheReadahead readahead = PageCacheReadahead.start(mapping, from, budget, List.of(early))
                    .orElseThrow();
            readahead.join();
            assertEquals(budget, readahead.doneBytes());
            MemorySegment read = mapping.asSlice(8 * PageCacheReadahead.CHUNK_BYTES, budget);
            assertTrue(awaitResident(read, 1.0), "the advised chunks: " + residentShare(read));
            assertTrue(awaitResident(early, 1.0), "the early range: " + residentShare(early));
            // the kernel may read a little past an advised range, never all of what lies between them
            MemorySegment between = mapping.asSlice(16L << 20, 16L << 20);
            assertTrue(residentShare(between) < 0.5, "not advised: " + residentShare(between));
            assertTrue(PageCacheReadahead.start(mapping, 0, 0, List.of()).isEmpty(), "no budget, nothing to read");
        }
    }

    /**
     * A model opened to run is read ahead (one opened only to look at is not), and the readahead stops when the file
     * closes, which then unmaps it without a complaint.
     */
    @Test
    void aModelOpenedToRunIsReadAheadAndClosesWhileItIs() throws Throwable {
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        try (ZseFile file = ZseFile.openToRun(zse); ZseFile looked = ZseFile.open(zse)) {
            assertTrue(file.readingAhead());
            assertTrue(!looked.readingAhead());
        }
        for (int i = 0; i < 20; i++) {
            evict(zse);
            ZseFile.openToRun(zse).close(); // mostly while the advice is under way
        }
    }

    @Test
    void theBudgetIsHalfOfWhatIsFreeAndOfWhatTheCgroupHasLeft() throws IOException {
        Path meminfo = Files.writeString(dir.resolve("meminfo"), "MemTotal: 4000 kB\nMemAvailable:    1000 kB\n");
        Path max = Files.writeString(dir.resolve("memory.max"), "1000000\n");
        Path current = Files.writeString(dir.resolve("memory.current"), "400000\n");
        Path unlimited = Files.writeString(dir.resolve("unlimited"), "max\n");
        Path none = dir.resolve("absent");
        assertEquals(512_000, PageCacheReadahead.budget(meminfo, unlimited, current));
        assertEquals(300_000, PageCacheReadahead.budget(meminfo, max, current));
        assertEquals(512_000, PageCacheReadahead.budget(meminfo, none, none));
        assertEquals(0, PageCacheReadahead.budget(none, max, current));
        Path full = Files.writeString(dir.resolve("memory.full"), "1000001\n");
        assertEquals(0, PageCacheReadahead.budget(meminfo, max, full));
    }

    @Test
    void theSwitchTakesOnOrOff() {
        assertTrue(PageCacheReadahead.enabled(null));
        assertTrue(PageCacheReadahead.enabled("on"));
        assertTrue(!PageCacheReadahead.enabled("off"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PageCacheReadahead.enabled("yes"));
        assertEquals("ZSE_READAHEAD must be on or off, not 'yes'", e.getMessage());
    }

    private static boolean awaitResident(MemorySegment range, double share) throws Throwable {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (residentShare(range) >= share) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    // libc, for what the JDK does not offer: a file's pages out of the page cache, and which pages are in it
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPEN = LINKER.downcallHandle(LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().find("close")
            .orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle FADVISE = LINKER.downcallHandle(LINKER.defaultLookup().find("posix_fadvise")
            .orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle MINCORE = LINKER.downcallHandle(LINKER.defaultLookup().find("mincore")
            .orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
            ValueLayout.ADDRESS));
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final long PAGE = 4096;

    private static void evict(Path file) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) OPEN.invokeExact(arena.allocateFrom(file.toAbsolutePath().toString()), 0);
            assertTrue(fd >= 0, "open " + file);
            try {
                assertEquals(0, (int) FADVISE.invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED));
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        }
    }

    /** The share of the pages of {@code range} (inside a file's mapping) that are in the page cache. */
    private static double residentShare(MemorySegment range) throws Throwable {
        long start = range.address() / PAGE * PAGE;
        long pages = (range.address() + range.byteSize() - start + PAGE - 1) / PAGE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vector = arena.allocate(pages);
            assertEquals(0, (int) MINCORE.invokeExact(MemorySegment.ofAddress(start), pages * PAGE, vector));
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vector.get(ValueLayout.JAVA_BYTE, i) & 1;
            }
            return resident / (double) pages;
        }
    }
}
