package io.zse.cli;

import io.zse.TestModels;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code zse convert} streams: a checkpoint many times the JVM's heap converts in a forked JVM with a small -Xmx, and
 * the process's peak resident set stays far below the checkpoint's size (read chunks leave the resident set as they
 * are written), while the output checks out.
 */
class ConvertMemoryTest {
    private static final String HEAP = "-Xmx48m";
    /**
     * Peak RSS allowed: the JVM itself (code, metaspace, a 48 MB heap), the native library and a few chunks; 138 MB
     * measured. Keeping a tensor's read pages until the tensor is done would add the 268 MB embedding matrix.
     */
    private static final long RSS_LIMIT_BYTES = 220L << 20;

    @TempDir
    Path dir;

    @Test
    void checkpointFarLargerThanTheHeapConvertsWithBoundedResidentMemory() throws IOException, InterruptedException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs /proc to read the child's peak RSS");
        Path checkpoint = dir.resolve("ckpt");
        // Llama 3.2 1B widths, 1 layer, 32768 tokens: 512 MB of F32, ten times the child's heap, half of it the
        // embedding matrix (one tensor of 268 MB)
        int code = ZseCommand.execute("synth", "--preset", "llama-3.2-1b", "--layers", "1", "--dtype", "f32",
                "--set", "vocab_size=32768", "--set", "bos_token_id=1", "--set", "eos_token_id=2", "--tokenizer",
                TestModels.tinyStories().toString(), "-o", checkpoint.toString());
        assertEquals(0, code, "synth failed");
        long inputBytes;
        try (Stream<Path> files = Files.list(checkpoint)) {
            inputBytes = files.filter(p -> p.toString().endsWith(".safetensors"))
                    .mapToLong(p -> p.toFile().length()).sum();
        }
        assertTrue(inputBytes > 400L << 20, "checkpoint of " + inputBytes + " bytes");

        Path out = dir.resolve("out.zse");
        Path log = dir.resolve("err.txt");
        ProcessBuilder builder = new ProcessBuilder(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), HEAP, "-XX:+UseSerialGC",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                ZseMain.class.getName(), "convert", checkpoint.toString(), "-o", out.toString(), "--quant", "q4"))
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().keySet().removeAll(List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS"));
        Process child = builder.start();
        long peak = 0;
        Path status = Path.of("/proc", String.valueOf(child.pid()), "status");
        while (!child.waitFor(50, TimeUnit.MILLISECONDS)) {
            peak = Math.max(peak, peakRss(status));
        }
        String output = Files.readString(log);
        assertEquals(0, child.exitValue(), output);
        assertTrue(peak > 0, "never read the child's peak RSS");
        assertTrue(peak < RSS_LIMIT_BYTES, "peak RSS " + (peak >> 20) + " MiB converting " + (inputBytes >> 20)
                + " MiB with " + HEAP + ":\n" + output);
        assertTrue(output.contains("convert: 100%"), output); // the progress lines are still there
        try (ZseFile zse = ZseFile.open(out)) {
            zse.verify(); // every checksum
            assertEquals(TensorType.Q4, zse.tensor("model.layers.0.mlp.down_proj.weight").info().type());
        }
    }

    /** VmHWM of a running process in bytes, 0 once it is gone. */
    private static long peakRss(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0; // exited between the check and the read
        }
        return 0;
    }
}
