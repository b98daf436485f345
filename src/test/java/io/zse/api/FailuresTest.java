package io.zse.api;

import io.zse.format.MappedFiles;
import io.zse.serve.AdmissionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each kind of failure of a request answers, wrapped as futures and Funqy wrap them. */
class FailuresTest {
    @Test
    void aRequestWhoseModelFileFaultsMidwayGets503NamingTheFault() {
        ApiException e = Failures.toApi(new CompletionException(MappedFiles.readFault(0x1234)));
        assertEquals(503, e.status());
        assertEquals(30, e.retryAfterSeconds());
        assertTrue(e.getMessage().startsWith("the model was taken out of service: reading mapped memory at 0x1234"
                + " failed (SIGBUS)"), e.getMessage());
    }

    /** The Java kernels fault as the JVM's InternalError, wrapped by the engine's loop: the shrunk file explains it. */
    @Test
    void aJavaKernelsFaultOnAShrunkFileIs503NamingTheFile(@TempDir Path dir) throws IOException {
        InternalError jvm = new InternalError("a fault occurred in an unsafe memory access operation");
        assertEquals(500, Failures.toApi(new IllegalStateException(jvm)).status(), "no mapped file has shrunk");
        Path file = dir.resolve("model.zse");
        Files.write(file, new byte[8192]);
        try (Arena arena = Arena.ofShared(); FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            MappedFiles.map(file, channel, arena);
            try (FileChannel writer = FileChannel.open(file, StandardOpenOption.WRITE)) {
                writer.truncate(4096);
            }
            ApiException e = Failures.toApi(new IllegalStateException(jvm));
            assertEquals(503, e.status());
            assertTrue(e.getMessage().startsWith("the model was taken out of service: " + file + ": a read failed"
                    + " (SIGBUS): the file is now 4096 bytes, 8192 when it was mapped"), e.getMessage());
        }
    }

    @Test
    void aRefusedAdmissionIs503WithItsRetryAfter() {
        ApiException e = Failures.toApi(new AdmissionException("the queue is full", 7));
        assertEquals(503, e.status());
        assertEquals(7, e.retryAfterSeconds());
        assertEquals("the queue is full", e.getMessage());
    }

    @Test
    void anApiExceptionAnywhereInTheCausesIsTheAnswer() {
        ApiException invalid = ApiException.invalid("bad", "temperature");
        assertSame(invalid, Failures.toApi(new RuntimeException(new CompletionException(invalid))));
    }

    @Test
    void anythingElseIsA500WithAnIncidentId() {
        ApiException e = Failures.toApi(new IllegalStateException("a bug"));
        assertEquals(500, e.status());
        assertTrue(e.getMessage().matches("the server had an error processing the request \\(incident [0-9a-f]{8}\\)"),
                e.getMessage());
    }
}
