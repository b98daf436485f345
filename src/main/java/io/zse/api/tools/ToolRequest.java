package io.zse.api.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.api.ApiException;
import io.zse.api.OpenAiShapes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The tool part of a chat request: {@code tools}, {@code tool_choice} and {@code parallel_tool_calls}, checked as
 * OpenAI checks them.
 *
 * @param tools      the tools as the chat template receives them (null when there are none)
 * @param parameters each function's parameters schema, by name, in the request's order
 * @param strict     each function's {@code strict} flag, by name
 * @param choice     what the model may or must do
 * @param named      the function a named choice forces (else null)
 */
public record ToolRequest(List<Map<String, Object>> tools, Map<String, JsonNode> parameters,
                          Map<String, Boolean> strict, Choice choice, String named, boolean parallel) {
    public enum Choice { NONE, AUTO, REQUIRED, NAMED }

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,64}");
    /** OpenAI: a function without parameters takes none, so its only arguments are {} (not any object). */
    private static final JsonNode NO_PARAMETERS = OpenAiShapes.JSON.createObjectNode()
            .put("type", "object").put("additionalProperties", false)
            .set("properties", OpenAiShapes.JSON.createObjectNode());

    public static ToolRequest read(JsonNode body) {
        JsonNode tools = present(body, "tools");
        JsonNode choice = present(body, "tool_choice");
        JsonNode parallel = present(body, "parallel_tool_calls");
        if (parallel != null && !parallel.isBoolean()) {
            throw ApiException.invalid("parallel_tool_calls must be a boolean", "parallel_tool_calls");
        }
        boolean parallelCalls = parallel == null || parallel.asBoolean();
        if (tools == null || (tools.isArray() && tools.isEmpty())) {
            if (choice != null && !(choice.isTextual() && choice.asText().equals("none"))) {
                throw ApiException.invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when "
                        + "'tools' are specified.", "tool_choice");
            }
            return new ToolRequest(null, Map.of(), Map.of(), Choice.NONE, null, parallelCalls);
        }
        if (!tools.isArray()) {
            throw ApiException.invalid("tools must be an array", "tools");
        }
        List<Map<String, Object>> templateTools = new ArrayList<>();
        Map<String, JsonNode> parameters = new LinkedHashMap<>();
        Map<String, Boolean> strict = new LinkedHashMap<>();
        for (int i = 0; i < tools.size(); i++) {
            String where = "tools[" + i + "]";
            JsonNode tool = tools.get(i);
            if (!tool.isObject() || !"function".equals(tool.path("type").asText())) {
                throw ApiException.invalid(where + ".type must be 'function' (the only tool type this server runs)",
                        where + ".type");
            }
            JsonNode function = tool.get("function");
            if (function == null || !function.isObject()) {
                throw ApiException.invalid("Missing required parameter: '" + where + ".function'.", where + ".function");
            }
            String name = function.path("name").asText("");
            if (!NAME.matcher(name).matches()) {
                throw ApiException.invalid("Invalid '" + where + ".function.name': a name of 1 to 64 letters, digits, "
                        + "underscores and dashes is required", where + ".function.name");
            }
            if (parameters.containsKey(name)) {
                throw ApiException.invalid("Duplicate function name '" + name + "' in tools", where + ".function.name");
            }
            JsonNode schema = function.get("parameters");
            if (schema != null && !schema.isNull() && !schema.isObject()) {
                throw ApiException.invalid(where + ".function.parameters must be a JSON schema object",
                        where + ".function.parameters");
            }
            parameters.put(name, schema == null || schema.isNull() ? NO_PARAMETERS : schema);
            strict.put(name, function.path("strict").asBoolean(false));
            templateTools.add(OpenAiShapes.JSON.convertValue(tool, Map.class));
        }
        Choice mode = Choice.AUTO;
        String named = null;
        if (choice != null) {
            if (choice.isTextual()) {
                mode = switch (choice.asText()) {
                    case "none" -> Choice.NONE;
                    case "auto" -> Choice.AUTO;
                    case "required" -> Choice.REQUIRED;
                    default -> throw ApiException.invalid("Invalid value for 'tool_choice': '" + choice.asText()
                            + "'. Supported values are: 'none', 'auto', 'required' or a named function.", "tool_choice");
                };
            } else if (choice.isObject() && "function".equals(choice.path("type").asText())
                    && choice.path("function").path("name").isTextual()) {
                named = choice.path("function").path("name").asText();
                if (!parameters.containsKey(named)) {
                    throw ApiException.invalid("Invalid value for 'tool_choice': no function named '" + named
                            + "' is among the tools.", "tool_choice");
                }
                mode = Choice.NAMED;
            } else {
                throw ApiException.invalid("tool_choice must be 'none', 'auto', 'required' or "
                        + "{\"type\": \"function\", \"function\": {\"name\": ...}}", "tool_choice");
            }
        }
        return new ToolRequest(templateTools, parameters, strict, mode, named, parallelCalls);
    }

    /** The model may write calls, which the server then parses out of its output. */
    public boolean callsExpected() {
        return choice != Choice.NONE;
    }

    /** The model must write a call: generation is constrained to one. */
    public boolean callForced() {
        return choice == Choice.REQUIRED || choice == Choice.NAMED;
    }

    private static JsonNode present(JsonNode o, String name) {
        JsonNode v = o.get(name);
        return v == null || v.isNull() ? null : v;
    }
}
