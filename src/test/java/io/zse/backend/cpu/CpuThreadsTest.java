package io.zse.backend.cpu;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CpuThreadsTest {

    @Test
    void everyItemRunsExactlyOnceWhateverTheSplit() {
        try (CpuThreads threads = new CpuThreads(3)) {
            for (int count : new int[]{1, 2, 3, 7, 100, 4099}) {
                for (long work : new long[]{1, 1 << 10, 1 << 20}) {
                    AtomicIntegerArray seen = new AtomicIntegerArray(count);
                    threads.parallelFor(count, work, (start, end) -> {
                        for (int i = start; i < end; i++) {
                            seen.incrementAndGet(i);
                        }
                    });
                    for (int i = 0; i < count; i++) {
                        assertEquals(1, seen.get(i), "item " + i + " of " + count + " (work " + work + ")");
                    }
                }
            }
        }
    }

    /** A slow chunk does not hold the others: the free thread claims them, and the call still waits for the slow one. */
    @Test
    void aSlowChunkIsWaitedForAndTheRestGoToTheFreeThread() {
        try (CpuThreads threads = new CpuThreads(2)) {
            AtomicIntegerArray doneBy = new AtomicIntegerArray(8);
            long caller = Thread.currentThread().threadId();
            threads.parallelFor(8, 1 << 20, (start, end) -> {
                if (start == 0) {
                    sleep(200);
                }
                for (int i = start; i < end; i++) {
                    doneBy.set(i, Thread.currentThread().threadId() == caller ? 1 : 2);
                }
            });
            int byOne = 0;
            for (int i = 0; i < 8; i++) {
                assertTrue(doneBy.get(i) != 0, "item " + i + " not done when parallelFor returned");
                byOne += doneBy.get(i) == doneBy.get(0) ? 1 : 0;
            }
            assertTrue(byOne < 8, "one thread did every chunk although the first one slept");
        }
    }

    @Test
    void aFailureInAChunkReachesTheCallerAfterTheOthersFinish() {
        try (CpuThreads threads = new CpuThreads(2)) {
            IllegalStateException boom = new IllegalStateException("boom");
            AtomicIntegerArray seen = new AtomicIntegerArray(64);
            IllegalStateException thrown = assertThrows(IllegalStateException.class,
                    () -> threads.parallelFor(64, 1 << 20, (start, end) -> {
                        for (int i = start; i < end; i++) {
                            seen.incrementAndGet(i);
                        }
                        if (start == 0) {
                            throw boom;
                        }
                    }));
            assertSame(boom, thrown);
            for (int i = 0; i < 64; i++) {
                assertEquals(1, seen.get(i), "item " + i);
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
