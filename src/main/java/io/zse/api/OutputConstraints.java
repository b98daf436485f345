package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.api.tools.ToolCallFormat;
import io.zse.api.tools.ToolRequest;
import io.zse.generate.TokenConstraint;
import io.zse.generate.grammar.GrammarNode;
import io.zse.generate.grammar.JsonSchemaCompiler;
import io.zse.generate.grammar.SchemaException;
import io.zse.generate.grammar.TokenGrammar;
import io.zse.generate.grammar.TokenTrie;
import io.zse.serve.LoadedModel;

import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a chat request constrains its output to: {@code response_format} (a JSON object, or a JSON schema) or a call
 * that {@code tool_choice} forces. Compiled once per request; each choice gets its own {@link TokenConstraint}.
 */
final class OutputConstraints {
    private OutputConstraints() {
    }

    /** The constraint source for the request, or null when its output is free. */
    static Supplier<TokenConstraint> of(JsonNode body, ToolRequest tools, ToolCallFormat format, LoadedModel model) {
        GrammarNode grammar = responseFormat(body.get("response_format"));
        int[] prefix = new int[0];
        if (grammar != null && tools.callsExpected()) {
            throw ApiException.invalid("response_format cannot be combined with tools unless tool_choice is 'none'",
                    "response_format");
        }
        if (tools.callForced()) {
            Map<String, GrammarNode> functions = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> f : tools.parameters().entrySet()) {
                if (tools.named() == null || tools.named().equals(f.getKey())) {
                    String where = "tools[" + indexOf(tools, f.getKey()) + "].function.parameters";
                    try {
                        functions.put(f.getKey(), JsonSchemaCompiler.compileParameters(f.getValue(),
                                tools.strict().get(f.getKey())));
                    } catch (SchemaException e) {
                        throw ApiException.invalid("Invalid schema for function '" + f.getKey() + "': " + e.getMessage(),
                                where, "invalid_function_parameters");
                    }
                }
            }
            try {
                grammar = JsonSchemaCompiler.finish(format.grammar(functions, tools.parallel(), model.tokenizer()));
            } catch (IllegalArgumentException e) { // a recursion in some parameters with no way out
                throw ApiException.invalid("Invalid function parameters: " + e.getMessage(), "tools",
                        "invalid_function_parameters");
            }
            prefix = format.markerToken(model.tokenizer()).stream().toArray();
        }
        if (grammar == null) {
            return null;
        }
        TokenGrammar tokens;
        try {
            tokens = new TokenGrammar(grammar, TokenTrie.of(model.tokenizer()));
        } catch (IllegalArgumentException e) { // a grammar nested past the parser's depth before its first byte
            throw ApiException.invalid(e.getMessage(), tools.callForced() ? "tool_choice" : "response_format");
        }
        int missing = tokens.missingByte();
        if (missing >= 0) {
            throw ApiException.invalid("this model's vocabulary has no token for '" + (char) missing + "', so its "
                    + "output cannot be constrained to JSON", tools.callForced() ? "tool_choice" : "response_format",
                    "unsupported_vocabulary");
        }
        Set<Integer> eos = new HashSet<>(model.model().config().eosTokenIds());
        int[] forced = prefix;
        return () -> tokens.newConstraint(eos, forced);
    }

    private static GrammarNode responseFormat(JsonNode format) {
        if (format == null || format.isNull()) {
            return null;
        }
        if (!format.isObject()) {
            throw ApiException.invalid("response_format must be an object", "response_format");
        }
        String type = format.path("type").asText("");
        return switch (type) {
            case "text" -> null;
            case "json_object" -> JsonSchemaCompiler.anyObject();
            case "json_schema" -> jsonSchema(format.get("json_schema"));
            default -> throw ApiException.invalid("Invalid value: '" + type + "'. Supported values are: 'text', "
                    + "'json_object' and 'json_schema'.", "response_format.type");
        };
    }

    private static GrammarNode jsonSchema(JsonNode spec) {
        if (spec == null || !spec.isObject()) {
            throw ApiException.invalid("Missing required parameter: 'response_format.json_schema'.",
                    "response_format.json_schema");
        }
        for (Iterator<String> it = spec.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!Set.of("name", "description", "schema", "strict").contains(field)) {
                throw ApiException.invalid("Unrecognized parameter: 'response_format.json_schema." + field + "'",
                        "response_format.json_schema." + field);
            }
        }
        if (!spec.path("name").isTextual() || !spec.get("name").asText().matches("[a-zA-Z0-9_-]{1,64}")) {
            throw ApiException.invalid("Missing or invalid 'response_format.json_schema.name' (1 to 64 letters, "
                    + "digits, underscores, dashes)", "response_format.json_schema.name");
        }
        JsonNode schema = spec.get("schema");
        if (schema == null || schema.isNull()) {
            return JsonSchemaCompiler.anyObject();
        }
        try {
            return JsonSchemaCompiler.compile(schema, spec.path("strict").asBoolean(false));
        } catch (IllegalArgumentException e) { // a SchemaException, or a schema with no finite value
            throw ApiException.invalid("Invalid schema for response_format '" + spec.get("name").asText() + "': "
                    + e.getMessage(), "response_format", "invalid_json_schema");
        }
    }

    private static int indexOf(ToolRequest tools, String name) {
        int i = 0;
        for (String n : tools.parameters().keySet()) {
            if (n.equals(name)) {
                return i;
            }
            i++;
        }
        return -1;
    }
}
