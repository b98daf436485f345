package io.zse.cli;

import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the compute commands print on stderr when started as the launcher starts them: no JVM incubator notice, a
 * failure in one line, and a note when --max-tokens is cut to fit the context.
 */
class LauncherOutputTest {
    private static final String NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector";

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private Run run(List<String> command) throws IOException, InterruptedException {
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = ChildZse.builder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("did not finish: " + command);
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void aFailureIsOneLineWithoutTheIncubatorNotice() throws Exception {
        Path missing = dir.resolve("missing.zse");
        // the JVM itself prints the notice: the filter is what keeps it out
        Run bare = run(ChildZse.java("generate", "--model", missing.toString(), "--prompt", "x"));
        assertTrue(bare.err().contains(NOTICE), "the JVM prints the notice: " + bare.err());

        for (String command : List.of("generate", "bench", "eval")) {
            List<String> args = switch (command) {
                case "generate" -> List.of("generate", "--model", missing.toString(), "--prompt", "x");
                case "bench" -> List.of("bench", "--model", missing.toString());
                default -> List.of("eval", "--reference", missing.toString(), "--model", missing.toString(), "--text",
                        missing.toString());
            };
            Run r = run(ChildZse.launched(args.toArray(String[]::new)));
            assertEquals(1, r.exit(), command + ": " + r.err());
            List<String> lines = r.err().lines().toList();
            assertEquals(1, lines.size(), command + ": " + r.err());
            assertTrue(lines.getFirst().startsWith("zse " + command + ": ") && lines.getFirst().contains("no such")
                    && lines.getFirst().contains(missing.toString()), lines.getFirst());
        }
        Run usage = run(ChildZse.launched("generate", "--model", missing.toString()));
        assertEquals(2, usage.exit());
        assertEquals(1, usage.err().lines().count(), usage.err());
        assertTrue(usage.err().startsWith("zse generate: Missing required option: '--prompt=TEXT' (see zse generate "
                + "--help)"), usage.err());
    }

    @Test
    void maxTokensCutToFitTheContextSaysSo() throws Exception {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        Run r = run(ChildZse.launched("generate", "--model", model.toString(), "--prompt", "Once upon a time",
                "--max-tokens", "5000", "--temperature", "0", "--threads", "1", "--stop", ".", "--backend", "cpu"));
        assertEquals(0, r.exit(), r.err());
        // Besides auto's one line naming the CPU kernels it chose.
        assertEquals(List.of("zse generate: --max-tokens 5000 cut to 506: the prompt has 6 of the 512 tokens the "
                + "context holds"), r.err().lines().filter(line -> !line.startsWith("zse: CPU kernels: ")).toList());
        assertTrue(r.out().startsWith(","), r.out());
    }
}
