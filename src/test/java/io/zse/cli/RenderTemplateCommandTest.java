package io.zse.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse render-template} against Jinja2's renderings of the Qwen3 template (chat-templates/expected, made by
 * tools/reference/chat_template_goldens.py), from a tokenizer_config.json and from a .zse.
 */
class RenderTemplateCommandTest {
    private static final Path TEMPLATES = Path.of("src/test/resources/chat-templates");

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private static Run zse(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ZseCommand.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(exit, out.toString(), err.toString());
    }

    /** Qwen3's tokenizer_config.json as far as templates go: its template and its EOS token (it has no BOS). */
    private Path qwen3Config() throws IOException {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("chat_template", Files.readString(TEMPLATES.resolve("qwen3.jinja"), StandardCharsets.UTF_8));
        config.put("eos_token", "<|im_end|>");
        Path file = dir.resolve("tokenizer_config.json");
        new ObjectMapper().writeValue(file.toFile(), config);
        return file;
    }

    @Test
    void printsExactlyWhatJinja2RendersForEachCase() throws IOException {
        Path config = qwen3Config();
        for (String name : List.of("basic", "nosys", "think", "toolcall", "tools")) {
            Run r = zse("render-template", "--model", config.toString(), "--messages",
                    TEMPLATES.resolve("cases/" + name + ".json").toString());
            assertEquals(0, r.exit(), name + ": " + r.err());
            assertEquals(Files.readString(TEMPLATES.resolve("expected/qwen3__" + name + ".txt"), StandardCharsets.UTF_8),
                    r.out(), name);
        }
    }

    @Test
    void withoutTheGenerationPromptTheAssistantTurnIsNotOpened() throws IOException {
        String expected = Files.readString(TEMPLATES.resolve("expected/qwen3__basic.txt"), StandardCharsets.UTF_8);
        String opening = "<|im_start|>assistant\n";
        assertTrue(expected.endsWith(opening));
        Run r = zse("render-template", "--model", qwen3Config().toString(), "--messages",
                TEMPLATES.resolve("cases/basic.json").toString(), "--no-generation-prompt");
        assertEquals(expected.substring(0, expected.length() - opening.length()), r.out());
    }

    @Test
    void aModelWithoutTemplateRendersTheServersFallbackAndSaysSo() throws IOException {
        Path model = TestModels.convertTinyStories(TensorType.Q8, dir);
        Path messages = dir.resolve("messages.json");
        Files.writeString(messages, "[{\"role\": \"user\", \"content\": \"Once upon a time\"}, "
                + "{\"role\": \"assistant\", \"content\": \"there was a cat.\"}]");
        Run r = zse("render-template", "--model", model.toString(), "--messages", messages.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals("<|start_story|>Once upon a time\nthere was a cat.", r.out());
        assertTrue(r.err().contains("has no chat template"), r.err());
    }

    @Test
    void badInputIsOneLine() throws IOException {
        Path messages = dir.resolve("bad.json");
        Files.writeString(messages, "{\"messages\": [");
        Run r = zse("render-template", "--model", qwen3Config().toString(), "--messages", messages.toString());
        assertEquals(1, r.exit());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("zse render-template: " + messages + " is not valid JSON"), r.err());
        Files.writeString(messages, "{\"msgs\": []}");
        r = zse("render-template", "--model", qwen3Config().toString(), "--messages", messages.toString());
        assertEquals(1, r.exit());
        assertTrue(r.err().contains("expected {\"messages\": [...], ...}"), r.err());
    }

    /** A field of the wrong JSON type fails in one line that names it and says what it must be. */
    @Test
    void aFieldOfTheWrongTypeIsNamed() throws IOException {
        String user = "{\"role\": \"user\", \"content\": \"Hi\"}";
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"messages\": [" + user + "], \"tools\": \"notalist\"}",
                "\"tools\" must be an array of tool objects, not the string \"notalist\"");
        cases.put("{\"messages\": [" + user + "], \"tools\": [7]}", "\"tools[0]\" must be an object, not the number 7");
        cases.put("{\"messages\": {\"role\": \"user\"}}", "\"messages\" must be an array of messages, not an object");
        cases.put("[" + user + ", \"Hello\"]",
                "\"messages[1]\" must be an object with a role and a content, not the string \"Hello\"");
        cases.put("[{\"role\": \"user\", \"content\": 42}]",
                "\"messages[0].content\" must be a string, an array of content parts or null, not the number 42");
        cases.put("[{\"content\": \"Hi\"}]", "\"messages[0].role\" must be a string, not missing");
        cases.put("{\"messages\": [" + user + "], \"add_generation_prompt\": \"no\"}",
                "\"add_generation_prompt\" must be true or false, not the string \"no\"");
        Path config = qwen3Config();
        Path messages = dir.resolve("messages.json");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Files.writeString(messages, c.getKey());
            Run r = zse("render-template", "--model", config.toString(), "--messages", messages.toString());
            assertEquals(1, r.exit(), c.getKey());
            assertEquals("zse render-template: " + messages + ": " + c.getValue() + "\n", r.err(), c.getKey());
        }
    }

    /** A directory given for a file is named (the JDK says only "Is a directory"). */
    @Test
    void aDirectoryForAFileIsNamed() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("conversation"));
        Run messages = zse("render-template", "--model", qwen3Config().toString(), "--messages", folder.toString());
        assertEquals(1, messages.exit());
        assertEquals("zse render-template: " + folder + ": Is a directory\n", messages.err());

        Path config = Files.createDirectory(dir.resolve("tokenizer_config.d.json"));
        Run model = zse("render-template", "--model", config.toString(), "--messages",
                TEMPLATES.resolve("cases/basic.json").toString());
        assertEquals(1, model.exit());
        assertEquals("zse render-template: " + config + ": Is a directory\n", model.err());
    }
}
