package io.zse.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.format.UserFiles;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The input of {@code zse render-template}: messages, tools and other template variables, read from a JSON file whose
 * shape is checked first, so a wrong one fails naming the field rather than as a cast deep in the renderer.
 *
 * @param tools                null when the file has none
 * @param generationPrompt     the file's {@code add_generation_prompt}, true when absent
 * @param variables            the file's other top-level fields
 */
record TemplateInput(List<Map<String, Object>> messages, List<Map<String, Object>> tools, boolean generationPrompt,
                     Map<String, Object> variables) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() { };

    /** {@code {"messages": [...], "tools": [...], ...}}, or just the array of messages. */
    static TemplateInput read(Path file) throws IOException {
        JsonNode input;
        try {
            input = JSON.readTree(UserFiles.readBytes(file));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException(file + " is not valid JSON: " + e.getOriginalMessage());
        }
        if (input != null && input.isArray()) {
            return new TemplateInput(messages(file, input), null, true, Map.of());
        }
        if (input == null || !input.isObject() || !input.has("messages")) {
            throw new IllegalArgumentException(file + ": expected {\"messages\": [...], ...} or an array of messages");
        }
        Map<String, Object> variables = JSON.convertValue(input, OBJECT);
        variables.remove("messages");
        variables.remove("tools");
        Object generationPrompt = variables.remove("add_generation_prompt");
        if (generationPrompt != null && !(generationPrompt instanceof Boolean)) {
            throw invalid(file, "add_generation_prompt", "true or false", input.get("add_generation_prompt"));
        }
        return new TemplateInput(messages(file, input.get("messages")), tools(file, input.get("tools")),
                !Boolean.FALSE.equals(generationPrompt), variables);
    }

    private static List<Map<String, Object>> messages(Path file, JsonNode messages) {
        if (!messages.isArray()) {
            throw invalid(file, "messages", "an array of messages", messages);
        }
        List<Map<String, Object>> list = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            String where = "messages[" + i + "]";
            JsonNode m = messages.get(i);
            if (!m.isObject()) {
                throw invalid(file, where, "an object with a role and a content", m);
            }
            if (!m.path("role").isTextual()) {
                throw invalid(file, where + ".role", "a string", m.get("role"));
            }
            JsonNode content = m.get("content");
            // what templates take: text, OpenAI's content parts, or none (an assistant turn with only tool calls)
            if (content != null && !content.isTextual() && !content.isArray() && !content.isNull()) {
                throw invalid(file, where + ".content", "a string, an array of content parts or null", content);
            }
            list.add(JSON.convertValue(m, OBJECT));
        }
        return list;
    }

    private static List<Map<String, Object>> tools(Path file, JsonNode tools) {
        if (tools == null || tools.isNull()) {
            return null;
        }
        if (!tools.isArray()) {
            throw invalid(file, "tools", "an array of tool objects", tools);
        }
        List<Map<String, Object>> list = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            if (!tools.get(i).isObject()) {
                throw invalid(file, "tools[" + i + "]", "an object", tools.get(i));
            }
            list.add(JSON.convertValue(tools.get(i), OBJECT));
        }
        return list;
    }

    private static IllegalArgumentException invalid(Path file, String field, String expected, JsonNode found) {
        return new IllegalArgumentException(file + ": \"" + field + "\" must be " + expected + ", not "
                + describe(found));
    }

    private static String describe(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "missing";
        }
        return switch (node.getNodeType()) {
            case STRING -> "the string " + node;
            case NUMBER -> "the number " + node;
            case BOOLEAN -> node.asText();
            case NULL -> "null";
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            default -> node.getNodeType().name().toLowerCase();
        };
    }
}
