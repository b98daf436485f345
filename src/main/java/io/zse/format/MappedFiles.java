package io.zse.format;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The files mapped to be read by native code, so that a read that faults can be named: a page of a mapping that lies
 * past the end of its file, which shrank after it was mapped, raises SIGBUS (the native kernels return a fault status
 * instead of crashing the JVM). A mapping is forgotten once its arena is closed.
 */
public final class MappedFiles {
    private record Mapping(Path path, MemorySegment segment) {
        boolean contains(long address) {
            return segment.scope().isAlive() && address - segment.address() >= 0
                    && address - segment.address() < segment.byteSize();
        }
    }

    /** Why a file in use comes to end early, and how to replace one safely. */
    public static final String REWRITTEN_IN_PLACE = "it was truncated or rewritten in place while in use (replace a"
            + " served file by renaming a new one over it)";

    private static final List<Mapping> MAPPINGS = new CopyOnWriteArrayList<>();

    private MappedFiles() {
    }

    /** Maps all of {@code channel}'s file (read-only) into {@code arena} and remembers it as {@code path}'s. */
    public static MemorySegment map(Path path, FileChannel channel, Arena arena) throws IOException {
        MemorySegment mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
        MAPPINGS.removeIf(m -> !m.segment.scope().isAlive());
        MAPPINGS.add(new Mapping(path, mapping));
        return mapping;
    }

    /** The error for a read at {@code address} that faulted, naming the file mapped there and what became of it. */
    public static MappedReadException readFault(long address) {
        for (Mapping m : MAPPINGS) {
            if (m.contains(address)) {
                long offset = address - m.segment.address();
                return new MappedReadException(m.path, "reading byte " + offset + " failed (SIGBUS): " + cause(m));
            }
        }
        return new MappedReadException(null, String.format("reading mapped memory at 0x%x failed (SIGBUS): a mapped"
                + " file was truncated while in use, or its storage failed", address));
    }

    /**
     * The JVM's own error for a faulting read in Java code (the Java kernels) names no address: when a file mapped
     * here has shrunk since, that is the likely cause, and the error to report names it.
     */
    public static Optional<MappedReadException> explain(InternalError error) {
        if (error.getMessage() == null || !error.getMessage().contains("unsafe memory access")) {
            return Optional.empty();
        }
        for (Mapping m : MAPPINGS) {
            if (m.segment.scope().isAlive()) {
                String cause = cause(m);
                if (cause.startsWith("the file is now")) {
                    return Optional.of(new MappedReadException(m.path, "a read failed (SIGBUS): " + cause));
                }
            }
        }
        return Optional.empty();
    }

    private static String cause(Mapping m) {
        try {
            long now = Files.size(m.path);
            return now < m.segment.byteSize() ? shrunk(now, m.segment.byteSize()) : "the file's storage failed to read";
        } catch (IOException e) {
            return "the file is gone or unreadable (" + e.getMessage() + ")";
        }
    }

    /** What a mapped file that has shrunk from {@code mapped} to {@code now} bytes means to its reader. */
    static String shrunk(long now, long mapped) {
        return "the file is now " + now + " bytes, " + mapped + " when it was mapped: " + REWRITTEN_IN_PLACE;
    }
}
