package io.zse.cli;

import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void printsTheTable() {
        Path model = TestModels.convertTinyStories(TensorType.Q4, dir);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = ZseCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "bench", "--model",
                model.toString(), "--prompt-tokens", "16", "--tokens", "8", "--warmup", "1", "--threads", "1,2", "--bandwidth-mb", "16");
        assertEquals(0, code, err.toString());
        String[] lines = out.toString().split("\n");
        assertTrue(lines[0].contains("tinystories-q4.zse") && lines[0].contains("prompt 16 tokens, 8 decoded"), lines[0]);
        assertEquals("KV cache f32 (1024 bytes per token)", lines[1]);
        assertTrue(lines[2].startsWith("threads  load ms  TTFT ms  prefill tok/s  decode tok/s"), lines[1]);
        assertEquals(5, lines.length, out.toString());
        assertTrue(lines[3].trim().startsWith("1 ") && lines[4].trim().startsWith("2 "), out.toString());
        assertTrue(lines[4].matches(".*[0-9] %\\s+[0-9.]+$"), out.toString());
    }

    @Test
    void profileTimesEveryOpOfBothPhases() {
        ConvertInspectCliTest.Run run = benchQ8("--prompt-tokens", "16", "--tokens", "8", "--profile");
        String out = run.out();
        assertTrue(out.contains("1 threads, prefill of 16 tokens: "), out);
        assertTrue(out.contains("1 threads, decode of 7 tokens: "), out);
        // TinyStories-656K: 2 layers of q, k, v, o, gate, up, down products, and the Q8 output projection.
        assertTrue(out.matches("(?s).*\\nmatmul Q8 \\[2048 x 128\\] +7 .*"), out);
        assertTrue(out.matches("(?s).*\\nattention +14 .*"), out);
        assertTrue(out.contains("(outside the ops)"), out);
    }

    /** --batch: sequences decoded together, a line per count and thread count, after the table. */
    @Test
    void batchesDecodeTogetherAndCompareWithOneSequence() {
        ConvertInspectCliTest.Run run = benchQ8("--prompt-tokens", "8", "--tokens", "6", "--batch", "2,4");
        String[] lines = run.out().split("\n");
        assertTrue(lines[4].matches("1 threads, 2 sequences decoded together: [0-9.]+ tok/s in all, [0-9.]+x one "
                + "sequence's"), run.out());
        assertTrue(lines[5].startsWith("1 threads, 4 sequences decoded together: "), run.out());
    }

    /** --profile with --batch: the batch's steps get an op table of their own. */
    @Test
    void profileTimesTheOpsOfTheBatchSteps() {
        String out = benchQ8("--prompt-tokens", "8", "--tokens", "6", "--batch", "2", "--profile").out();
        String table = out.substring(out.indexOf("1 threads, decode of 5 steps of 2 sequences together: "));
        // one output projection a step, for both rows; 2 layers' attention a step
        assertTrue(table.matches("(?s).*\\nmatmul Q8 \\[2048 x 128\\] +5 .*"), out);
        assertTrue(table.matches("(?s).*\\nattention +10 .*"), out);
    }

    @Test
    void printsTheKvCacheTypeItRanWith() {
        ConvertInspectCliTest.Run run = benchQ8("--prompt-tokens", "16", "--tokens", "8", "--kv-cache", "int8");
        // 2 layers x (keys + values) x (64 one-byte codes + 4 four-byte head scales)
        assertTrue(run.out().contains("KV cache int8 (320 bytes per token)"), run.out());
    }

    /** zse bench on TinyStories Q8, one thread, no warm-up, with {@code options}; it must exit 0. */
    private ConvertInspectCliTest.Run benchQ8(String... options) {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        List<String> args = new ArrayList<>(List.of("bench", "--model", model.toString(), "--warmup", "0",
                "--threads", "1"));
        args.addAll(List.of(options));
        ConvertInspectCliTest.Run run = ConvertInspectCliTest.run(args.toArray(String[]::new));
        assertEquals(0, run.exit(), run.err());
        return run;
    }

    @Test
    void rejectsCountsThatLeaveNothingToMeasure() {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        String[][] cases = {{"--tokens", "1", "--tokens must be at least 2, not 1"},
                {"--prompt-tokens", "0", "--prompt-tokens must be at least 1, not 0"},
                {"--warmup", "-1", "--warmup must be at least 0, not -1"},
                {"--threads", "2,0", "--threads must be at least 1, not 0"},
                {"--batch", "16,1", "--batch must be at least 2, not 1"}};
        for (String[] c : cases) {
            ConvertInspectCliTest.Run run = ConvertInspectCliTest.run("bench", "--model", model.toString(), c[0], c[1]);
            assertEquals(2, run.exit(), run.err());
            // one line, naming the command and pointing at its help
            assertEquals("zse bench: " + c[2] + " (see zse bench --help)", run.err().strip(), run.err());
        }
    }
}
