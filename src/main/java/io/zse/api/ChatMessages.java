package io.zse.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * OpenAI chat messages as a chat template receives them, the way transformers' users pass them: text content,
 * assistant {@code tool_calls} with their arguments as objects (OpenAI sends a JSON string; templates write the
 * object with {@code tojson}), tool results with their {@code tool_call_id}.
 */
public final class ChatMessages {
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    private static final Set<String> FIELDS = Set.of("role", "content", "name", "tool_calls", "tool_call_id");

    private ChatMessages() {
    }

    /**
     * OpenAI's developer messages are its system messages for newer models. A template that never names the developer
     * role (Qwen3's, Llama's) would drop them or refuse them, so it gets them as system messages; one that names it
     * gets them as they are, as vLLM passes them.
     */
    public static List<Map<String, Object>> forTemplate(List<Map<String, Object>> messages, String templateSource) {
        if (!templateSource.contains("developer")) {
            messages.stream().filter(m -> "developer".equals(m.get("role"))).forEach(m -> m.put("role", "system"));
        }
        return messages;
    }

    public static List<Map<String, Object>> read(JsonNode messages) {
        if (messages == null || messages.isNull() || !messages.isArray() || messages.isEmpty()) {
            throw ApiException.invalid("messages must be a non-empty array", "messages");
        }
        List<Map<String, Object>> list = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            list.add(message(messages.get(i), "messages[" + i + "]"));
        }
        return list;
    }

    private static Map<String, Object> message(JsonNode m, String where) {
        if (!m.isObject()) {
            throw ApiException.invalid(where + " must be an object", where);
        }
        for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!FIELDS.contains(name) && !m.get(name).isNull()) {
                throw ApiException.invalid(where + "." + name + " is not supported by this server", where + "." + name,
                        "unsupported_parameter");
            }
        }
        String role = text(m, "role", where + ".role");
        if (role == null) {
            throw ApiException.invalid("you must provide " + where + ".role", where + ".role");
        }
        if (!ROLES.contains(role)) {
            throw ApiException.invalid("'" + role + "' is not one of " + ROLES + " - '" + where + ".role'", where + ".role");
        }
        JsonNode calls = m.get("tool_calls");
        boolean hasCalls = calls != null && !calls.isNull();
        if (hasCalls && !role.equals("assistant")) {
            throw ApiException.invalid(where + ".tool_calls is only allowed on assistant messages", where + ".tool_calls");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("role", role);
        out.put("content", content(m.get("content"), where + ".content", role.equals("assistant")));
        String name = text(m, "name", where + ".name");
        if (name != null) {
            out.put("name", name);
        }
        if (hasCalls) {
            out.put("tool_calls", toolCalls(calls, where + ".tool_calls")); // only when present: templates test 'in'
        }
        String callId = text(m, "tool_call_id", where + ".tool_call_id");
        if (role.equals("tool")) {
            if (callId == null) {
                throw ApiException.invalid("Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                        + "'tool_call_id'.", where + ".tool_call_id");
            }
            out.put("tool_call_id", callId);
        }
        return out;
    }

    private static List<Map<String, Object>> toolCalls(JsonNode calls, String where) {
        if (!calls.isArray()) {
            throw ApiException.invalid(where + " must be an array", where);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            String at = where + "[" + i + "]";
            JsonNode call = calls.get(i);
            JsonNode function = call.path("function");
            if (!call.path("id").isTextual() || !function.path("name").isTextual()) {
                throw ApiException.invalid(at + " needs an 'id' and a 'function' with a 'name'", at);
            }
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("name", function.get("name").asText());
            f.put("arguments", arguments(function.get("arguments"), at + ".function.arguments"));
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("id", call.get("id").asText());
            c.put("type", "function");
            c.put("function", f);
            out.add(c);
        }
        return out;
    }

    /** OpenAI's arguments string, parsed: templates write the object (a string that is not JSON stays a string). */
    private static Object arguments(JsonNode arguments, String where) {
        if (arguments == null || arguments.isNull()) {
            return Map.of();
        }
        if (arguments.isObject()) {
            return OpenAiShapes.JSON.convertValue(arguments, Map.class);
        }
        if (!arguments.isTextual()) {
            throw ApiException.invalid(where + " must be a string of JSON", where);
        }
        try {
            JsonNode parsed = OpenAiShapes.JSON.readTree(arguments.asText());
            return parsed != null && parsed.isObject() ? OpenAiShapes.JSON.convertValue(parsed, Map.class)
                    : arguments.asText();
        } catch (JsonProcessingException e) {
            return arguments.asText();
        }
    }

    /**
     * A string, or an array of {"type": "text", "text": ...} parts joined by newlines, as vLLM joins them (other part
     * types are not supported).
     */
    private static String content(JsonNode content, String where, boolean assistant) {
        if (content == null || content.isNull()) {
            if (assistant) {
                return "";
            }
            throw ApiException.invalid(where + " is required", where);
        }
        if (content.isTextual()) {
            return content.asText();
        }
        if (!content.isArray()) {
            throw ApiException.invalid(where + " must be a string or an array of content parts", where);
        }
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < content.size(); i++) {
            JsonNode part = content.get(i);
            String type = part.path("type").asText("");
            if (!type.equals("text") || !part.path("text").isTextual()) {
                throw ApiException.invalid(where + "[" + i + "]: only text parts ({\"type\": \"text\", \"text\": ...}) are "
                        + "supported", where + "[" + i + "]", "unsupported_content");
            }
            texts.add(part.get("text").asText());
        }
        return String.join("\n", texts);
    }

    private static String text(JsonNode o, String name, String param) {
        JsonNode v = o.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw ApiException.invalid(param + " must be a string", param);
        }
        return v.asText();
    }
}
