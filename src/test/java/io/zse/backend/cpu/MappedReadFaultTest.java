package io.zse.backend.cpu;

import io.zse.format.MappedFiles;
import io.zse.format.MappedReadException;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A weight file truncated while it is mapped: the native products' reads past its new end raise SIGBUS, which the
 * library turns into a status, so the JVM lives and the caller gets an error naming the file.
 */
class MappedReadFaultTest {
    private static final int ROWS = 64, COLS = 1024; // F32 rows of 4 KiB: a page each

    @TempDir
    Path dir;

    @Test
    void aProductOverAFileTruncatedWhileMappedThrowsNamingTheFile() throws IOException {
        NativeCpuLibrary library = NativeLibraryProbe.result().library().orElse(null);
        assumeTrue(library != null, "no libzse_cpu here");
        Path file = dir.resolve("weights.bin");
        ByteBuffer bytes = ByteBuffer.allocate(ROWS * COLS * Float.BYTES).order(ByteOrder.nativeOrder());
        SplittableRandom random = new SplittableRandom(7);
        while (bytes.hasRemaining()) {
            bytes.putFloat((float) random.nextDouble(-1, 1));
        }
        Files.write(file, bytes.array());
        try (Arena arena = Arena.ofShared(); FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment weights = MappedFiles.map(file, channel, arena);
            MemorySegment x = arena.allocate((long) COLS * Float.BYTES);
            for (int c = 0; c < COLS; c++) {
                x.setAtIndex(JAVA_FLOAT, c, (float) random.nextDouble(-1, 1));
            }
            MemorySegment out = arena.allocate((long) ROWS * Float.BYTES);
            library.matmulFloat(TensorType.F32, weights, COLS, 0, ROWS, x, 1, out, ROWS);
            float[] before = out.toArray(JAVA_FLOAT);

            try (FileChannel writer = FileChannel.open(file, StandardOpenOption.WRITE)) {
                writer.truncate(4L * COLS * Float.BYTES); // 4 rows are left
            }
            MappedReadException e = assertThrows(MappedReadException.class,
                    () -> library.matmulFloat(TensorType.F32, weights, COLS, 0, ROWS, x, 1, out, ROWS));
            assertEquals(file, e.path());
            assertTrue(e.getMessage().startsWith(file + ": reading byte 16384 failed (SIGBUS): the file is now 16384"
                    + " bytes, 262144 when it was mapped"), e.getMessage());

            // the guard is set again for the next call: the rows still in the file multiply as before
            out.fill((byte) 0);
            library.matmulFloat(TensorType.F32, weights, COLS, 0, 4, x, 1, out, ROWS);
            for (int r = 0; r < 4; r++) {
                assertEquals(before[r], out.getAtIndex(JAVA_FLOAT, r), "row " + r);
            }
            // a fault outside the products still goes to the JVM, which raises it in Java code
            InternalError java = assertThrows(InternalError.class, () -> weights.get(JAVA_FLOAT, 200_000));
            assertTrue(java.getMessage().contains("unsafe memory access"), java.getMessage());
            assertJavaFaultExplained(file, java);
        }
    }

    /** The Java kernels' reads fault as the JVM's InternalError, which names no file: the shrunk mapping does. */
    @Test
    void aJavaReadOfATruncatedMappingIsExplainedByTheFile() throws IOException {
        Path file = dir.resolve("java.bin");
        Files.write(file, new byte[ROWS * COLS * Float.BYTES]);
        try (Arena arena = Arena.ofShared(); FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment weights = MappedFiles.map(file, channel, arena);
            InternalError unrelated = new InternalError("a fault occurred in an unsafe memory access operation");
            assertTrue(MappedFiles.explain(unrelated).isEmpty(), "no mapped file has shrunk");
            try (FileChannel writer = FileChannel.open(file, StandardOpenOption.WRITE)) {
                writer.truncate(4L * COLS * Float.BYTES);
            }
            InternalError java = assertThrows(InternalError.class, () -> weights.get(JAVA_FLOAT, 200_000));
            assertJavaFaultExplained(file, java);
            assertTrue(MappedFiles.explain(new InternalError("something else")).isEmpty(), "not a read fault");
        }
    }

    private static void assertJavaFaultExplained(Path file, InternalError java) {
        MappedReadException e = MappedFiles.explain(java).orElseThrow();
        assertEquals(file, e.path());
        assertTrue(e.getMessage().startsWith(file + ": a read failed (SIGBUS): the file is now 16384 bytes, 262144"
                + " when it was mapped"), e.getMessage());
    }

    @Test
    void aFaultOutsideEveryKnownMappingIsNamedByItsAddress() {
        MappedReadException e = MappedFiles.readFault(0x1234);
        assertEquals(null, e.path());
        assertTrue(e.getMessage().startsWith("reading mapped memory at 0x1234 failed (SIGBUS)"), e.getMessage());
    }
}
