package io.zse.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A checkpoint whose chat template is in its own {@code chat_template.jinja} (as newer transformers save it): convert
 * keeps the template, preferring it to tokenizer_config.json's as transformers does, and refuses one that does not
 * compile. Checked by rendering messages with the converted file, as a user would.
 */
class ConvertChatTemplateCliTest {
    private static final String TEMPLATE = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
            + "{% if add_generation_prompt %}[assistant] {% endif %}";

    @TempDir
    Path dir;

    private String rendered(Path checkpoint) throws IOException {
        Path model = dir.resolve("model.zse");
        ConvertInspectCliTest.Run convert = ConvertInspectCliTest.run("convert", checkpoint.toString(), "-o",
                model.toString(), "--force");
        assertEquals(0, convert.exit(), convert.err());
        Path messages = dir.resolve("messages.json");
        Files.writeString(messages, "[{\"role\": \"user\", \"content\": \"Once upon a time\"}]");
        ConvertInspectCliTest.Run render = ConvertInspectCliTest.run("render-template", "--model", model.toString(),
                "--messages", messages.toString());
        assertEquals(0, render.exit(), render.err());
        return render.out();
    }

    @Test
    void aTemplateInItsOwnFileIsKept() throws IOException {
        Path checkpoint = ConvertRefusesBadInputCliTest.copyOfTinyStories(dir);
        Files.writeString(checkpoint.resolve("chat_template.jinja"), TEMPLATE);
        assertEquals("[user] Once upon a time\n[assistant] ", rendered(checkpoint));
    }

    @Test
    void itIsPreferredToTheConfigsTemplate() throws IOException {
        Path checkpoint = ConvertRefusesBadInputCliTest.copyOfTinyStories(dir);
        Path configFile = checkpoint.resolve("tokenizer_config.json");
        ObjectNode config = (ObjectNode) new ObjectMapper().readTree(configFile.toFile());
        config.put("chat_template", "the config's template");
        Files.writeString(configFile, config.toPrettyString());
        assertEquals("the config's template", rendered(checkpoint));
        Files.writeString(checkpoint.resolve("chat_template.jinja"), TEMPLATE);
        assertEquals("[user] Once upon a time\n[assistant] ", rendered(checkpoint));
    }

    @Test
    void aTemplateThatDoesNotCompileIsRefusedAtConvert() throws IOException {
        Path checkpoint = ConvertRefusesBadInputCliTest.copyOfTinyStories(dir);
        Files.writeString(checkpoint.resolve("chat_template.jinja"), "{% for m in messages %}{{ m.content }}");
        Path model = dir.resolve("model.zse");
        ConvertInspectCliTest.Run convert = ConvertInspectCliTest.run("convert", checkpoint.toString(), "-o",
                model.toString());
        assertEquals(1, convert.exit(), convert.out());
        assertTrue(convert.err().startsWith("zse convert: " + checkpoint.resolve("chat_template.jinja")
                + ": its chat template cannot be compiled: "), convert.err());
        assertFalse(Files.exists(model), "no .zse is written");
    }
}
