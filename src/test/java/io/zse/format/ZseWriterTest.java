package io.zse.format;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Writers of one output at once each write a file of their own: the output is always whole, the last one finished;
 * a writer stopped before it finished leaves nothing behind.
 */
class ZseWriterTest {
    private static final ValueLayout.OfFloat LITTLE_ENDIAN_FLOAT =
            JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    @TempDir
    Path dir;

    @Test
    void twoWritersOfOneOutputDoNotShareTheirTemporaryFile() throws IOException {
        Path out = dir.resolve("model.zse");
        try (ZseWriter first = writer(out); ZseWriter second = writer(out)) {
            write(second, 2f);
            write(first, 1f); // once truncated by the second's start, and its rename then found no file
        }
        try (ZseFile file = ZseFile.open(out)) {
            file.verify();
            assertEquals(1f, file.tensor("w").data().get(LITTLE_ENDIAN_FLOAT, 0), "the last one finished");
        }
        try (var files = Files.list(dir)) {
            assertEquals(List.of(out), files.toList(), "no temporary file left");
        }
    }

    /** A JVM stopped mid-write (SIGTERM, as Ctrl-C or a container stop sends) deletes its temporary file. */
    @Test
    void aWriterStoppedBySigtermLeavesNoTemporaryFile() throws Exception {
        Path out = dir.resolve("model.zse");
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), StoppedMidWrite.class.getName(), out.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader lines = child.inputReader()) {
            assertEquals("writing", lines.readLine(), "the child started writing");
            try (var files = Files.list(dir)) {
                assertEquals(1, files.filter(f -> f.getFileName().toString().endsWith(".partial")).count());
            }
            child.destroy(); // SIGTERM
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child stopped");
        } finally {
            child.destroyForcibly();
        }
        assertEquals(143, child.exitValue(), "128 + SIGTERM: stopped, not finished");
        try (var files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "no temporary file and no output left");
        }
    }

    /** Writes half of a tensor, says so, and waits to be stopped. */
    static final class StoppedMidWrite {
        public static void main(String[] args) throws Exception {
            ZseWriter writer = writer(Path.of(args[0]));
            writer.nextTensor().writeData(MemorySegment.ofArray(new byte[8 * Float.BYTES]));
            System.out.println("writing");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    private static ZseWriter writer(Path out) throws IOException {
        TensorInfo w = new TensorInfo("w", TensorType.F32, ZseLayout.LAYOUT_ROW_GROUPS, new long[]{4, 4}, 0, 0,
                16 * Float.BYTES, 0, 0, 0, 0);
        return ZseWriter.create(out, Map.of(SectionKind.CONFIG, "{}".getBytes(StandardCharsets.UTF_8)), List.of(w));
    }

    private static void write(ZseWriter writer, float value) throws IOException {
        ZseWriter.TensorSink sink = writer.nextTensor();
        ByteBuffer bytes = ByteBuffer.allocate(16 * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        while (bytes.hasRemaining()) {
            bytes.putFloat(value);
        }
        sink.writeData(MemorySegment.ofArray(bytes.array()));
        sink.finish();
        writer.finish();
    }
}
