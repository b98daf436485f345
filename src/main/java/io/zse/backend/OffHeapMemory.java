package io.zse.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Large zeroed off-heap areas for the KV pool. On Linux they are anonymous private mappings: the kernel hands out
 * zero pages on first touch, so a pool sized for the whole server costs neither start-up time nor resident memory
 * until sequences fill it ({@link Arena#allocate} would write every byte at start). Elsewhere, the arena's memory.
 */
final class OffHeapMemory {
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    // Linux values: private, anonymous, and without reserving swap for all of it up front (the pool is touched lazily)
    private static final int MAP_FLAGS = 0x02 | 0x20 | 0x4000;
    private static final boolean LINUX = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        MethodHandle mmap = null;
        MethodHandle munmap = null;
        if (LINUX) {
            try {
                Linker linker = Linker.nativeLinker();
                mmap = linker.downcallHandle(linker.defaultLookup().find("mmap").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                munmap = linker.downcallHandle(linker.defaultLookup().find("munmap").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
            } catch (RuntimeException | Error e) {
                mmap = null; // no native access (a restricted JVM): the arena's memory
                munmap = null;
            }
        }
        MMAP = mmap;
        MUNMAP = munmap;
    }

    private OffHeapMemory() {
    }

    /** {@code bytes} zeroed bytes, 64-byte aligned at least, unmapped or freed when {@code arena} closes. */
    static MemorySegment allocate(long bytes, Arena arena) {
        if (MMAP == null || bytes < 1 << 20) {
            return arena.allocate(Math.max(1, bytes), 64);
        }
        MemorySegment address;
        try {
            address = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE,
                    MAP_FLAGS, -1, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("mmap of " + bytes + " bytes failed", t);
        }
        if (address.address() == -1L) {
            throw new OutOfMemoryError("cannot map " + bytes + " bytes for the KV cache pool");
        }
        return address.reinterpret(bytes, arena, OffHeapMemory::unmap);
    }

    private static void unmap(MemorySegment mapping) {
        try {
            int ignored = (int) MUNMAP.invokeExact(mapping, mapping.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException("munmap failed", t);
        }
    }
}
