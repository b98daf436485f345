package io.zse.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code zse tokenize} and {@code zse detokenize} on the TinyStories tokenizer, through ZseCommand.execute. */
class TokenizeCommandTest {
    @TempDir
    Path dir;

    private InputStream stdin;
    private PrintStream stdout;
    private PrintStream stderr;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private Path model;

    @BeforeEach
    void redirect() throws IOException {
        stdin = System.in;
        stdout = System.out;
        stderr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        model = dir.resolve("tokenizer.json");
        try (InputStream in = getClass().getResourceAsStream("/tokenizers/tinystories-656k/tokenizer.json")) {
            Files.write(model, in.readAllBytes());
        }
    }

    @AfterEach
    void restore() {
        System.setIn(stdin);
        System.setOut(stdout);
        System.setErr(stderr);
    }

    @Test
    void tokenizesStdinToJsonIds() {
        // ids from the Python tokenizers library (golden/tokenizers/tinystories.json)
        assertEquals(0, run("Hello, world!", "tokenize", "--model", model.toString(), "--add-special"));
        assertEquals("[1,80,1443,410,555,4]", output().strip());
    }

    @Test
    void detokenizesJsonIdsToText() {
        assertEquals(0, run("[1, 80, 1443, 410, 555, 4]", "detokenize", "--model", model.toString(),
                "--skip-special"));
        assertEquals("<|start_story|> Hello, world!", output());
    }

    @Test
    void readsTheTokenizerStoredInAZseFile() {
        Path zse = io.zse.TestModels.convertTinyStories(io.zse.format.TensorType.Q8, dir);
        assertEquals(0, run("Hello, world!", "tokenize", "--model", zse.toString(), "--add-special"));
        assertEquals("[1,80,1443,410,555,4]", output().strip());
    }

    @Test
    void readsTheTokenizerOfACheckpointDirectory() throws IOException {
        assertEquals(0, run("Hello, world!", "tokenize", "--model", dir.toString(), "--add-special"));
        assertEquals("[1,80,1443,410,555,4]", output().strip());
        Path empty = Files.createDirectory(dir.resolve("empty"));
        assertEquals(1, run("hi", "tokenize", "--model", empty.toString()));
        assertEquals("zse tokenize: " + empty + " is a directory without a tokenizer.json: give a tokenizer.json or"
                + " .zse file", err.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    void missingModelIsOneLine() {
        assertEquals(1, run("hi", "tokenize", "--model", dir.resolve("m.zse").toString()));
        assertEquals("zse tokenize: " + dir.resolve("m.zse") + ": no such file", err.toString(StandardCharsets.UTF_8).strip());
    }

    @Test
    void badInputIsOneLine() {
        assertEquals(1, run("1 2 3", "detokenize", "--model", model.toString()));
        String message = err.toString(StandardCharsets.UTF_8).strip();
        assertEquals("zse detokenize: expected a JSON array of token ids on stdin", message);
        assertTrue(message.lines().count() == 1);
    }

    private int run(String input, String... args) {
        System.setIn(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)));
        return ZseCommand.execute(args);
    }

    private String output() {
        return out.toString(StandardCharsets.UTF_8);
    }
}
