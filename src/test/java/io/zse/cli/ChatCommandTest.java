package io.zse.cli;

import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse chat} in a child JVM, as the launcher starts it: a conversation piped in, and a session under a
 * pseudo-terminal (util-linux's {@code script}) where Ctrl-C stops a streaming reply and, at the prompt, ends the chat.
 */
class ChatCommandTest {
    @TempDir
    Path dir;

    @Test
    void aPipedConversationWithItsCommands() throws Exception {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        Process chat = ChildZse.builder(withSigint("--default-signal=INT", ChildZse.launched("chat", "--model",
                model.toString(), "--temperature", "0", "--max-tokens", "12", "--backend", "cpu", "--threads", "1")))
                .redirectError(dir.resolve("err.txt").toFile()).start();
        try (OutputStream in = chat.getOutputStream()) {
            in.write("Once upon a time\n/system Tell a story.\n/bogus\n/reset\nThe little dog\n/exit\n"
                    .getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(chat.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(chat.waitFor(60, TimeUnit.SECONDS));
        String err = Files.readString(dir.resolve("err.txt"));
        assertEquals(0, chat.exitValue(), err);
        // Nothing but auto's one line naming the CPU kernels it chose: no JVM notice, no failure.
        assertEquals("", err.lines().filter(line -> !line.startsWith("zse: CPU kernels: ")).collect(
                java.util.stream.Collectors.joining("\n")), "no JVM notice, no failure: " + err);
        // the demo has no template: the first turn is BOS + the message, so the reply is transformers' greedy story
        assertTrue(out.contains("> , a little girl named Lily"), out);
        assertEquals(6, out.split("> ", -1).length - 1, "a prompt before each line read: " + out);
        String[] inOrder = {"has no chat template", "/reset clears the conversation", "> , a little girl",
                "(the reply reached its token limit)", "(system prompt set)", "(unknown command /bogus",
                "(conversation cleared)"};
        int at = 0;
        for (String note : inOrder) {
            at = out.indexOf(note, at);
            assertTrue(at >= 0, note + " in order in: " + out);
        }
    }

    /** Started with SIGINT ignored (nohup, a background job), the chat says that Ctrl-C cannot stop a reply there. */
    @Test
    void aChatThatCannotSeeCtrlCSaysSo() throws Exception {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        Process chat = ChildZse.builder(withSigint("--ignore-signal=INT", ChildZse.launched("chat", "--model",
                model.toString(), "--backend", "cpu", "--threads", "1"))).start();
        try (OutputStream in = chat.getOutputStream()) {
            in.write("/exit\n".getBytes(StandardCharsets.UTF_8));
        }
        String err = new String(chat.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(chat.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, chat.exitValue(), err);
        assertTrue(err.contains("zse chat: this process was started with SIGINT ignored, so Ctrl-C cannot stop a "
                + "reply; /exit or Ctrl-D ends the chat"), err);
    }

    /**
     * The command under {@code env} with SIGINT's disposition set: a build started in the background of a script (as a
     * CI runner may start it) passes SIGINT ignored to every child, and the JVM then never installs a handler for it.
     */
    private static List<String> withSigint(String disposition, List<String> command) {
        List<String> all = new java.util.ArrayList<>(List.of("env", disposition));
        all.addAll(command);
        return all;
    }

    @Test
    void ctrlCStopsAReplyUnderAPseudoTerminalAndEndsTheChatAtThePrompt() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/script")), "no util-linux script for a pty");
        Path model = slowModel();
        String command = String.join(" ", withSigint("--default-signal=INT", ChildZse.launched("chat", "--model",
                model.toString(), "--temperature", "0", "--backend", "cpu", "--threads", "1")).stream()
                .map(ChatCommandTest::quoted).toList());
        Process script = ChildZse.builder(List.of("/usr/bin/script", "-qfec", command, "/dev/null"))
                .redirectErrorStream(true).start();
        StringBuffer screen = new StringBuffer();
        Thread reader = Thread.ofPlatform().daemon().start(() -> copy(script.getInputStream(), screen));
        try (OutputStream keys = script.getOutputStream()) {
            waitFor(screen, s -> s.contains("> "), "the first prompt");
            type(keys, "Hello there\r");
            int echoed = waitFor(screen, s -> s.contains("Hello there"), "the echo").indexOf("Hello there");
            // the reply streams: text arrives after the echoed line, and keeps arriving
            waitFor(screen, s -> s.length() > echoed + "Hello there".length() + 40, "streamed text");
            type(keys, "\u0003");
            waitFor(screen, s -> s.contains("(stopped)"), "the reply to stop");
            int stoppedAt = screen.indexOf("(stopped)");
            waitFor(screen, s -> s.indexOf("> ", stoppedAt) > 0, "the next prompt");
            Thread.sleep(500);
            String afterStop = screen.substring(stoppedAt);
            assertTrue(afterStop.length() < 40, "nothing streamed after the stop: " + afterStop);
            type(keys, "\u0003"); // at the prompt: the chat ends
            assertTrue(script.waitFor(30, TimeUnit.SECONDS), "the chat ended: " + screen);
        } finally {
            script.destroyForcibly();
        }
        reader.join(5000);
        assertEquals(130, script.exitValue(), screen.toString());
        assertTrue(!screen.toString().contains("WARNING: Using incubator"), screen.toString());
    }

    /**
     * A random-weight model of 4,096 positions and a few million parameters: greedy, it writes on for thousands of
     * tokens (the seeded weights never pick the end token), so a reply is still streaming when Ctrl-C comes.
     */
    private Path slowModel() {
        Path hf = dir.resolve("slow");
        StringWriter err = new StringWriter();
        int synth = ZseCommand.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), "synth",
                "--preset", "llama-3.2-1b", "--layers", "4", "--dtype", "f32", "--seed", "3",
                "--tokenizer", TestModels.tinyStories().toString(), "--set", "vocab_size=2048",
                "--set", "hidden_size=512", "--set", "intermediate_size=1536", "--set", "num_attention_heads=8",
                "--set", "num_key_value_heads=4", "--set", "max_position_embeddings=4096", "--set", "bos_token_id=1",
                "--set", "eos_token_id=2", "-o", hf.toString());
        assertEquals(0, synth, err.toString());
        Path zse = dir.resolve("slow.zse");
        assertEquals(0, ZseCommand.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), "convert",
                hf.toString(), "-o", zse.toString(), "--quant", "q8"), err.toString());
        return zse;
    }

    private static String quoted(String arg) {
        return "'" + arg.replace("'", "'\\''") + "'";
    }

    private static void type(OutputStream keys, String text) throws IOException {
        keys.write(text.getBytes(StandardCharsets.UTF_8));
        keys.flush();
    }

    private static String waitFor(StringBuffer screen, Predicate<String> condition, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String now = screen.toString();
            if (condition.test(now)) {
                return now;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("timed out waiting for " + what + ": " + screen);
    }

    private static void copy(InputStream in, StringBuffer into) {
        byte[] buffer = new byte[4096];
        try {
            for (int n; (n = in.read(buffer)) > 0; ) {
                into.append(new String(buffer, 0, n, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // the process ended
        }
    }
}
