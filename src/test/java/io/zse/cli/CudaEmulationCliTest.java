package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a user without a GPU does to watch the CUDA path work: {@code ZSE_CUDA_LIBRARY} names the CPU emulation and
 * {@code zse generate --backend cuda} (a child JVM, as from the shell) tells transformers' greedy story.
 */
class CudaEmulationCliTest {
    private static final Path EMULATION = Path.of("target/native/libzse_cuda_emu.so").toAbsolutePath();
    private static final int TOKENS = 16;

    @TempDir
    Path dir;

    @Test
    void generateOnTheEmulatedGpuTellsTheGreedyStory() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(EMULATION), "no " + EMULATION + " (g++ was not found at build time)");
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        String err = zseOnTheEmulation("generate", "--model", zse.toString(), "--prompt", golden.get("prompt").asText(),
                "--max-tokens", String.valueOf(TOKENS), "--temperature", "0", "--json", "--backend", "cuda",
                "--timings");
        assertFalse(err.contains("running on the CPU"), err);
        JsonNode result = new ObjectMapper().readTree(dir.resolve("out.json").toFile());
        for (int i = 0; i < TOKENS; i++) {
            assertEquals(golden.get("greedy_ids").get(i), result.get("ids").get(i), "token " + i);
        }
        // --timings on CUDA: also when the early device probe finished and the weights were copied out, all in order
        String timings = err.lines().filter(l -> l.startsWith("timings since process start: ")).findFirst()
                .orElseThrow(() -> new AssertionError(err));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("([a-zA-Z ]+) (\\d+) ms")
                .matcher(timings.substring(timings.indexOf(':') + 1, timings.indexOf(';')));
        List<String> names = new java.util.ArrayList<>();
        long previous = -1;
        while (m.find()) {
            names.add(m.group(1).strip());
            assertTrue(Long.parseLong(m.group(2)) >= previous, timings);
            previous = Long.parseLong(m.group(2));
        }
        assertTrue(names.containsAll(List.of("CUDA probe done", "weights copied out", "backend ready",
                "first token")), timings);
    }

    /** {@code --kv-cache int8} on the emulated GPU (INT8 rows on the device too) gives the CPU backend's greedy ids. */
    @Test
    void int8CacheOnTheEmulatedGpuGivesTheCpuIds() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(EMULATION), "no " + EMULATION + " (g++ was not found at build time)");
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        JsonNode onCuda = greedyIds(Map.of(), zse, TOKENS, "--backend", "cuda", "--kv-cache", "int8");
        assertEquals(TOKENS, onCuda.size());
        assertEquals(greedyIds(Map.of(), zse, TOKENS, "--backend", "cpu", "--kv-cache", "int8"), onCuda);
    }

    /** ZSE_CUDA_UPLOAD_SOURCE=reads: the lanes read the file into staging instead of the mapping; the same ids. */
    @Test
    void weightsReadFromTheFileGiveTheSameIds() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(EMULATION), "no " + EMULATION + " (g++ was not found at build time)");
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        JsonNode read = greedyIds(Map.of("ZSE_CUDA_UPLOAD_SOURCE", "reads"), zse, 8, "--backend", "cuda");
        assertEquals(8, read.size());
        assertEquals(greedyIds(Map.of("ZSE_CUDA_UPLOAD_SOURCE", "mapping"), zse, 8, "--backend", "cuda"), read);
    }

    /** The ids of {@code zse generate} on "Once upon a time", greedy, with {@code options} (on the emulation). */
    private JsonNode greedyIds(Map<String, String> environment, Path model, int tokens, String... options)
            throws IOException, InterruptedException {
        List<String> args = new java.util.ArrayList<>(List.of("generate", "--model", model.toString(), "--prompt",
                "Once upon a time", "--max-tokens", String.valueOf(tokens), "--temperature", "0", "--json"));
        args.addAll(List.of(options));
        String err = zseOnTheEmulation(environment, args.toArray(String[]::new));
        assertFalse(args.contains("cuda") && err.contains("running on the CPU"), err);
        return new ObjectMapper().readTree(dir.resolve("out.json").toFile()).get("ids");
    }

    @Test
    void benchReplaysTheMeasuredDecodeStepsAsGraphs() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(EMULATION), "no " + EMULATION + " (g++ was not found at build time)");
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        zseOnTheEmulation("bench", "--model", zse.toString(), "--backend", "cuda", "--prompt-tokens", "8",
                "--tokens", "40", "--warmup", "1", "--bandwidth-mb", "0", "--batch", "3");
        String out = Files.readString(dir.resolve("out.json"));
        // each run's cache is a new block pool: its first step runs op by op, the second is recorded, the rest replay,
        // the batch's too, across the steps whose rows take a new KV block (prompt 8 + 40: at 16 and 32)
        assertTrue(out.contains("decode: 37 of 39 steps replayed as CUDA graphs"), out);
        assertTrue(out.matches("(?s).*3 sequences decoded together: .* \\(37 of 39 steps replayed\\).*"), out);
        // and how the upload ran and where its threads and the weights' allocation spent their time
        assertTrue(out.matches("(?s).*upload [0-9.]+ GB/s: .* \\(copied out of the mapping into pinned staging, [0-9]+ "
                + "streams, 1 buffer of 16 MiB a lane, each lane queueing its copies; threads' time summed: pinning "
                + "staging [0-9.]+ ms, waiting "
                + "for a chunk to stage [0-9.]+ ms, waiting for a free buffer [0-9.]+ ms, filling staging [0-9.]+ ms, "
                + "queueing copies [0-9.]+ ms; the weights asked for over [0-9.]+ ms; allocating the weights' device "
                + "memory [0-9.]+ ms\\).*"), out);
    }

    /** --profile on CUDA waits for each op, so a batch's steps run op by op, none replayed, and their ops are timed. */
    @Test
    void benchProfilesTheBatchStepsOpByOp() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(EMULATION), "no " + EMULATION + " (g++ was not found at build time)");
        Path zse = TestModels.convertTinyStories(TensorType.Q8, dir);
        zseOnTheEmulation("bench", "--model", zse.toString(), "--backend", "cuda", "--prompt-tokens", "8",
                "--tokens", "4", "--warmup", "0", "--bandwidth-mb", "0", "--batch", "2", "--profile");
        String out = Files.readString(dir.resolve("out.json"));
        assertTrue(out.contains("2 sequences decoded together: ") && out.contains("(0 of 3 steps replayed)"), out);
        String table = out.substring(out.indexOf("decode of 3 steps of 2 sequences together: "));
        assertTrue(table.matches("(?s).*\\nmatmul Q8 \\[2048 x 128\\] +3 .*"), out);
    }

    private String zseOnTheEmulation(String... args) throws IOException, InterruptedException {
        return zseOnTheEmulation(Map.of(), args);
    }

    /**
     * Runs zse in a child JVM with ZSE_CUDA_LIBRARY naming the emulation and {@code environment} set; stdout to
     * out.json; returns stderr.
     */
    private String zseOnTheEmulation(Map<String, String> environment, String... args)
            throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), ZseMain.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("out.json").toFile())
                .redirectError(dir.resolve("err.txt").toFile());
        builder.environment().put("ZSE_CUDA_LIBRARY", EMULATION.toString());
        builder.environment().putAll(environment);
        builder.environment().keySet().removeAll(List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "ZSE_BACKEND"));
        Process child = builder.start();
        if (!child.waitFor(300, TimeUnit.SECONDS)) {
            child.destroyForcibly();
            throw new AssertionError("zse " + args[0] + " --backend cuda did not finish in 300 s");
        }
        String err = Files.readString(dir.resolve("err.txt"));
        assertEquals(0, child.exitValue(), err);
        return err;
    }
}
