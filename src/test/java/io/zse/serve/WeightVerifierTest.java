package io.zse.serve;

import io.zse.TestModels;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The weight check on a real converted model: it passes a clean file, names a damaged tensor, and stops on close. */
class WeightVerifierTest {
    @TempDir
    Path dir;

    @Test
    void aCleanFileIsOkAfterReadingTheWholeDataArea() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q4, dir);
        try (ZseFile file = ZseFile.open(zse)) {
            WeightVerifier verifier = new WeightVerifier(file, () -> false);
            assertInstanceOf(WeightVerifier.NotStarted.class, verifier.status());
            WeightVerifier.Ok ok = assertInstanceOf(WeightVerifier.Ok.class, verifier.verifyNow());
            assertEquals(file.dataLength(), ok.bytes());
            assertEquals("ok", verifier.status().summary());
        }
    }

    @Test
    void aFlippedByteNamesItsTensorWithBothChecksums() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q4, dir);
        TensorInfo damaged;
        try (ZseFile file = ZseFile.open(zse)) {
            damaged = file.tensors().get(file.tensors().size() / 2);
        }
        TestModels.flipByteInTensor(zse, damaged.name());
        try (ZseFile file = ZseFile.open(zse)) { // metadata checksums still hold: it opens
            WeightVerifier.Failed failed = assertInstanceOf(WeightVerifier.Failed.class,
                    new WeightVerifier(file, () -> false).verifyNow());
            assertEquals(damaged.name(), failed.tensor());
            assertEquals(damaged.dataCrc(), failed.expectedCrc());
            assertNotEquals(failed.expectedCrc(), failed.actualCrc());
            assertTrue(failed.message().contains("tensor " + damaged.name() + ": data checksum mismatch"), failed.message());
        }
    }

    /** A file cut short while mapped: the check's reads past the new end fault, and it fails naming the file. */
    @Test
    void aFileTruncatedWhileMappedFailsTheCheckWithTheReason() throws IOException {
        Path zse = TestModels.convertTinyStories(TensorType.Q4, dir);
        try (ZseFile file = ZseFile.open(zse)) {
            long size = Files.size(zse);
            try (FileChannel writer = FileChannel.open(zse, StandardOpenOption.WRITE)) {
                writer.truncate(size / 2);
            }
            WeightVerifier.Failed failed = assertInstanceOf(WeightVerifier.Failed.class,
                    new WeightVerifier(file, () -> false).verifyNow());
            assertEquals(null, failed.tensor());
            assertTrue(failed.message().startsWith(zse + ": the file is now " + size / 2 + " bytes, " + size
                    + " when it was mapped"), failed.message());
        }
    }

    @Test
    void theBackgroundCheckReportsOnceAndRunsAtMinimumPriority() throws Exception {
        Path zse = TestModels.convertTinyStories(TensorType.Q4, dir);
        try (ZseFile file = ZseFile.open(zse); WeightVerifier verifier = new WeightVerifier(file, () -> false)) {
            CompletableFuture<WeightVerifier.Status> done = new CompletableFuture<>();
            CompletableFuture<Integer> priority = new CompletableFuture<>();
            verifier.startInBackground(status -> {
                priority.complete(Thread.currentThread().getPriority());
                done.complete(status);
            });
            assertInstanceOf(WeightVerifier.Ok.class, done.get(30, TimeUnit.SECONDS));
            assertEquals(Thread.MIN_PRIORITY, priority.get());
        }
    }

    @Test
    void closeStopsABackgroundCheckBeforeTheFileIsUnmapped() throws Exception {
        Path zse = TestModels.convertTinyStories(TensorType.Q4, dir);
        List<WeightVerifier.Status> reported = new ArrayList<>();
        WeightVerifier verifier;
        try (ZseFile file = ZseFile.open(zse)) {
            // requests always in flight: it gives way after every chunk and would take seconds
            verifier = new WeightVerifier(file, () -> true);
            verifier.startInBackground(reported::add);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!(verifier.status() instanceof WeightVerifier.Running r && r.bytesChecked() > 0)
                    && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long start = System.nanoTime();
            verifier.close();
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(1).toNanos(), "close waits at most a chunk");
            assertFalse(verifierThreadAlive(), "the thread has ended");
        }
        WeightVerifier.Cancelled cancelled = assertInstanceOf(WeightVerifier.Cancelled.class, verifier.status());
        assertTrue(cancelled.bytesChecked() > 0 && cancelled.bytesChecked() < Files.size(zse), cancelled.toString());
        assertEquals(List.of(), reported, "a cancelled check reports nothing");
        verifier.startInBackground(reported::add); // closed: never starts again
        assertFalse(verifierThreadAlive());
    }

    private static boolean verifierThreadAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("zse-weight-verifier") && t.isAlive());
    }
}
