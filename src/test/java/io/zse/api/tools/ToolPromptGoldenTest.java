package io.zse.api.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.api.ChatMessages;
import io.zse.tokenizer.template.ChatTemplate;
import io.zse.tokenizer.template.ChatTemplateException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * OpenAI requests with tools, assistant tool calls and tool results, turned into template input as the server does
 * and rendered by our Jinja renderer: equal to transformers' apply_chat_template(..., tools=...) for every family
 * (goldens from tools/reference/tool_prompt_goldens.py).
 */
class ToolPromptGoldenTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void promptsMatchTransformers() throws Exception {
        JsonNode golden = JSON.readTree(resource("/tool-calls/prompts.json"));
        int checked = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = golden.get("expected").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String[] names = e.getKey().split("__");
            JsonNode request = golden.get("cases").get(names[1]);
            ToolRequest tools = ToolRequest.read(request);
            var messages = ChatMessages.read(request.get("messages"));
            ChatTemplate template = ChatTemplate.compile(template(names[0]));
            String bos = golden.get("bos_token").isNull() ? null : golden.get("bos_token").asText();
            String eos = golden.get("eos_token").asText();
            String expected = e.getValue().asText();
            if (expected.startsWith("EXCEPTION")) {
                assertThrows(ChatTemplateException.class,
                        () -> template.render(messages, tools.tools(), true, bos, eos, Map.of()), e.getKey());
            } else {
                assertEquals(expected, template.render(messages, tools.tools(), true, bos, eos, Map.of()), e.getKey());
            }
            checked++;
        }
        assertTrue(checked >= 12, "cases: " + checked);
    }

    private static String template(String name) throws IOException {
        if (name.equals("qwen3")) {
            try (InputStream in = resource("/tokenizers/qwen3/tokenizer_config.json")) {
                return JSON.readTree(in).get("chat_template").asText();
            }
        }
        try (InputStream in = resource("/chat-templates/" + name + ".jinja")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static InputStream resource(String path) {
        InputStream in = ToolPromptGoldenTest.class.getResourceAsStream(path);
        if (in == null) {
            throw new IllegalStateException("missing test resource " + path);
        }
        return in;
    }
}
