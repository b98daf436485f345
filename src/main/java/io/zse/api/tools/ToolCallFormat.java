package io.zse.api.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.generate.grammar.GrammarNode;
import io.zse.tokenizer.Tokenizer;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

import static io.zse.generate.grammar.GrammarNode.literal;
import static io.zse.generate.grammar.GrammarNode.sequence;

/**
 * How a family of chat templates writes tool calls, recognised from the template's own text: where calls start in the
 * model's output, how each call's JSON names the function and its arguments, and the grammar that forces one.
 */
public enum ToolCallFormat {
    /** Qwen2.5, Qwen3, Hermes: {@code <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>}, one block per call. */
    HERMES("<tool_call>", "arguments"),
    /** Llama 3.1 / 3.2: the whole reply is {@code {"name": ..., "parameters": {...}}}, maybe after {@code <|python_tag|>}. */
    LLAMA_JSON("<|python_tag|>", "parameters"),
    /** Mistral: {@code [TOOL_CALLS]} then a JSON array of {@code {"name": ..., "arguments": {...}}}. */
    MISTRAL("[TOOL_CALLS]", "arguments");

    private static final String ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    final String marker;
    final String argumentsKey;

    ToolCallFormat(String marker, String argumentsKey) {
        this.marker = marker;
        this.argumentsKey = argumentsKey;
    }

    /** The format a chat template teaches its model, or empty when the template shows none this server knows. */
    public static Optional<ToolCallFormat> of(String template) {
        if (template.contains("<tool_call>")) {
            return Optional.of(HERMES);
        }
        if (template.contains("[TOOL_CALLS]")) {
            return Optional.of(MISTRAL);
        }
        if (template.contains("<|python_tag|>") || template.contains("\"parameters\": dictionary of argument name")) {
            return Optional.of(LLAMA_JSON);
        }
        return Optional.empty();
    }

    /** A description of the known formats, for the error that says a template has none of them. */
    public static String known() {
        return "Hermes/Qwen <tool_call>, Llama 3.1 JSON, Mistral [TOOL_CALLS]";
    }

    /** Llama 3.1's templates allow one call per assistant turn. */
    public boolean allowsParallelCalls() {
        return this != LLAMA_JSON;
    }

    /** A new call id; Mistral's templates insist on nine alphanumerics. */
    public String newCallId() {
        int length = this == MISTRAL ? 9 : 24;
        StringBuilder id = new StringBuilder(this == MISTRAL ? "" : "call_");
        for (int i = 0; i < length; i++) {
            id.append(ALPHANUMERIC.charAt(RANDOM.nextInt(ALPHANUMERIC.length())));
        }
        return id.toString();
    }

    public ToolCallParser newParser() {
        return new ToolCallParser(this);
    }

    /**
     * The output of a forced call: one call (or, when {@code parallel}, one or more) to one of {@code functions}
     * (name to the grammar of its arguments), written as this family writes calls.
     */
    public GrammarNode grammar(Map<String, GrammarNode> functions, boolean parallel, Tokenizer tokenizer) {
        List<GrammarNode> calls = new ArrayList<>();
        functions.forEach((name, arguments) -> calls.add(sequence(
                literal("{\"name\": " + quoted(name) + ", \"" + argumentsKey + "\": "), arguments, literal("}"))));
        GrammarNode call = GrammarNode.choice(calls);
        boolean many = parallel && allowsParallelCalls();
        return switch (this) {
            case HERMES -> {
                GrammarNode block = sequence(literal("<tool_call>\n"), call, literal("\n</tool_call>"));
                yield many ? GrammarNode.separated(block, literal("\n")) : block;
            }
            case LLAMA_JSON -> call;
            // a marker that is a special token is forced as that token (markerToken), not written as text
            case MISTRAL -> sequence(literal(markerToken(tokenizer).isPresent() ? "" : marker), literal("["),
                    many ? GrammarNode.separated(call, literal(", ")) : call, literal("]"));
        };
    }

    /** The marker as a single special token of this vocabulary, which a forced call then starts with. */
    public OptionalInt markerToken(Tokenizer tokenizer) {
        if (this != MISTRAL) {
            return OptionalInt.empty();
        }
        OptionalInt id = tokenizer.tokenId(marker);
        return id.isPresent() && tokenizer.isSpecial(id.getAsInt()) ? id : OptionalInt.empty();
    }

    /** Whether the marker is a special token, so the text must keep special tokens for the parser to see it. */
    public boolean markerIsSpecial(Tokenizer tokenizer) {
        OptionalInt id = tokenizer.tokenId(marker);
        return id.isPresent() && tokenizer.isSpecial(id.getAsInt());
    }

    private static String quoted(String name) {
        return io.zse.api.OpenAiShapes.JSON.getNodeFactory().textNode(name).toString();
    }

    /** A call's JSON object, or null when it is not one: {"name": string, arguments or parameters: object or string}. */
    ToolCall call(JsonNode json) {
        if (json == null || !json.isObject() || !json.path("name").isTextual()) {
            return null;
        }
        JsonNode arguments = json.has(argumentsKey) ? json.get(argumentsKey)
                : json.has("arguments") ? json.get("arguments") : json.get("parameters");
        String text;
        if (arguments == null || arguments.isNull()) {
            text = "{}";
        } else if (arguments.isTextual()) {
            text = arguments.asText();
        } else if (arguments.isObject()) {
            text = arguments.toString();
        } else {
            return null;
        }
        return new ToolCall(newCallId(), json.get("name").asText(), text);
    }
}
