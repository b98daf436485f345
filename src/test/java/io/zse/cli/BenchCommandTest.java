package io.zse.cli;

import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

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
                model.toString(), "--prompt-tokens", "16", "--tokens", "8", "--warmup", "1", "--threads", "1");
        assertEquals(0, code, err.toString());
        for (String row : new String[]{"load", "first token", "prefill", "decode", "peak RSS"}) {
            assertTrue(out.toString().contains(row), out.toString());
        }
    }
}
