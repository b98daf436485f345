package io.zse.generate.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.zse.generate.grammar.GrammarNode.choice;
import static io.zse.generate.grammar.GrammarNode.literal;
import static io.zse.generate.grammar.GrammarNode.sequence;

/**
 * Compiles a JSON Schema into a {@link GrammarNode} that writes only values the schema accepts, in the subset OpenAI's
 * structured outputs support: {@code type} (one or several), {@code properties}/{@code required}/
 * {@code additionalProperties: false}, {@code items}, {@code enum}, {@code const}, {@code anyOf}, {@code $defs} and
 * {@code $ref} (recursion included). Anything else is refused by name rather than silently ignored. Objects are written
 * with their properties in the schema's order, compactly (one optional space after ':' and ',').
 */
public final class JsonSchemaCompiler {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ANNOTATIONS = Set.of("description", "title", "default", "examples", "$schema",
            "$id", "$comment", "deprecated", "readOnly", "writeOnly");
    private static final Set<String> KEYWORDS = Set.of("type", "properties", "required", "additionalProperties",
            "items", "enum", "const", "anyOf", "$ref", "$defs", "definitions");
    private static final GrammarNode.Literal EMPTY = literal("");

    private final JsonNode root;
    private final boolean strict;
    private final Map<String, GrammarNode.Reference> references = new HashMap<>();
    /** References being compiled inside one another: a chain of them recurses once a link. */
    private int referenceDepth;
    /** Longer chains of references are refused (a hostile schema must not overflow the stack). */
    static final int MAX_REFERENCE_DEPTH = 256;
    private final GrammarNode space = choice(List.of(EMPTY, literal(" ")));
    private GrammarNode anyValue;

    private JsonSchemaCompiler(JsonNode root, boolean strict) {
        this.root = root;
        this.strict = strict;
    }

    /**
     * @param strict OpenAI's strict mode: the root is an object, every object says {@code additionalProperties: false}
     *               and lists all its properties in {@code required}
     * @throws SchemaException what the schema asks that cannot be enforced, by name and place
     */
    public static GrammarNode compile(JsonNode schema, boolean strict) {
        JsonSchemaCompiler compiler = new JsonSchemaCompiler(schema, strict);
        if (strict && !"object".equals(schema.path("type").asText())) {
            throw new SchemaException("#", "strict mode needs an object at the root (\"type\": \"object\")");
        }
        GrammarNode grammar = compiler.node(schema, "#", Set.of());
        return finish(grammar);
    }

    /** Any JSON object ({@code response_format: json_object}). */
    public static GrammarNode anyObject() {
        JsonSchemaCompiler compiler = new JsonSchemaCompiler(null, false);
        return finish(compiler.object(compiler.any()));
    }

    /** A grammar built from pieces of compiled ones (tool calls): checks and completes it. */
    public static GrammarNode finish(GrammarNode grammar) {
        GrammarNode.computeMinLengths(grammar);
        return grammar;
    }

    /**
     * The grammar for the arguments of a tool call: its parameters schema, which (unlike a response format's) may be
     * any schema at the root. Not finished: it becomes part of a call's grammar.
     */
    public static GrammarNode compileParameters(JsonNode schema, boolean strict) {
        return new JsonSchemaCompiler(schema, strict).node(schema, "#", Set.of());
    }

    private GrammarNode node(JsonNode schema, String path, Set<String> unguardedRefs) {
        if (schema.isBoolean() && schema.asBoolean() && !strict) {
            return any();
        }
        if (!schema.isObject()) {
            throw new SchemaException(path, "a schema must be an object");
        }
        for (Iterator<String> it = schema.fieldNames(); it.hasNext(); ) {
            String keyword = it.next();
            if (!KEYWORDS.contains(keyword) && !ANNOTATIONS.contains(keyword)) {
                throw new SchemaException(path + "/" + keyword, "the keyword '" + keyword + "' is not supported");
            }
        }
        if (schema.has("$ref")) {
            if (schema.has("type") || schema.has("properties") || schema.has("anyOf") || schema.has("enum")) {
                throw new SchemaException(path, "'$ref' next to other keywords is not supported");
            }
            return reference(schema.get("$ref").asText(), path, unguardedRefs);
        }
        if (schema.has("const")) {
            return literal(json(schema.get("const")));
        }
        if (schema.has("enum")) {
            JsonNode values = schema.get("enum");
            if (!values.isArray() || values.isEmpty()) {
                throw new SchemaException(path + "/enum", "'enum' must be a non-empty array");
            }
            List<GrammarNode> options = new ArrayList<>();
            values.forEach(v -> options.add(literal(json(v))));
            return choice(options);
        }
        if (schema.has("anyOf")) {
            JsonNode options = schema.get("anyOf");
            if (!options.isArray() || options.isEmpty()) {
                throw new SchemaException(path + "/anyOf", "'anyOf' must be a non-empty array");
            }
            if (schema.has("type") || schema.has("properties")) {
                throw new SchemaException(path, "'anyOf' next to 'type' or 'properties' is not supported");
            }
            List<GrammarNode> nodes = new ArrayList<>();
            for (int i = 0; i < options.size(); i++) {
                nodes.add(node(options.get(i), path + "/anyOf/" + i, unguardedRefs));
            }
            return choice(nodes);
        }
        JsonNode type = schema.get("type");
        if (type == null) {
            if (schema.has("properties")) {
                return typed("object", schema, path, unguardedRefs);
            }
            if (strict) {
                throw new SchemaException(path, "strict mode needs a 'type' (or 'anyOf', 'enum', 'const', '$ref')");
            }
            return any();
        }
        if (type.isTextual()) {
            return typed(type.asText(), schema, path, unguardedRefs);
        }
        if (type.isArray() && !type.isEmpty()) {
            List<GrammarNode> options = new ArrayList<>();
            for (JsonNode t : type) {
                options.add(typed(t.asText(), schema, path, unguardedRefs));
            }
            return choice(options);
        }
        throw new SchemaException(path + "/type", "'type' must be a type name or an array of them");
    }

    private GrammarNode typed(String type, JsonNode schema, String path, Set<String> unguardedRefs) {
        return switch (type) {
            case "object" -> object(schema, path);
            case "array" -> {
                JsonNode items = schema.get("items");
                if (items == null && strict) {
                    throw new SchemaException(path, "strict mode needs 'items' for an array");
                }
                yield array(items == null ? any() : node(items, path + "/items", Set.of()));
            }
            case "string" -> GrammarNode.string();
            case "number" -> GrammarNode.number(false);
            case "integer" -> GrammarNode.number(true);
            case "boolean" -> choice(List.of(literal("true"), literal("false")));
            case "null" -> literal("null");
            default -> throw new SchemaException(path + "/type", "unknown type '" + type + "'");
        };
    }

    private GrammarNode object(JsonNode schema, String path) {
        JsonNode properties = schema.path("properties");
        if (!properties.isMissingNode() && !properties.isObject()) { // an array has no field names: any object would do
            throw new SchemaException(path + "/properties", "'properties' must be an object");
        }
        JsonNode additional = schema.get("additionalProperties");
        boolean closed = additional != null && additional.isBoolean() && !additional.asBoolean();
        if (strict && !closed) {
            throw new SchemaException(path, "strict mode needs \"additionalProperties\": false on every object");
        }
        if (additional != null && !additional.isBoolean()) {
            throw new SchemaException(path + "/additionalProperties", "'additionalProperties' as a schema is not supported");
        }
        Set<String> required = required(schema.get("required"), path + "/required");
        List<String> names = new ArrayList<>();
        properties.fieldNames().forEachRemaining(names::add);
        for (String r : required) {
            if (!properties.has(r)) {
                throw new SchemaException(path + "/required", "'" + r + "' is required but not among the properties");
            }
        }
        if (names.isEmpty() && !closed) {
            return object(any()); // an open object without properties: any members
        }
        List<GrammarNode> keys = new ArrayList<>();
        List<GrammarNode> values = new ArrayList<>();
        boolean[] isRequired = new boolean[names.size()];
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            if (strict && !required.contains(name)) {
                throw new SchemaException(path + "/properties/" + name,
                        "strict mode needs every property in 'required'; '" + name + "' is not");
            }
            isRequired[i] = required.contains(name);
            keys.add(literal(json(JSON.getNodeFactory().textNode(name)) + ":"));
            values.add(node(properties.get(name), path + "/properties/" + escape(name), Set.of()));
        }
        return sequence(literal("{"), members(keys, values, isRequired, 0, true, new HashMap<>()));
    }

    /** The names {@code required} lists (a string's elements would be none, and nothing required). */
    private static Set<String> required(JsonNode required, String path) {
        Set<String> names = new HashSet<>();
        if (required == null) {
            return names;
        }
        if (!required.isArray()) {
            throw new SchemaException(path, "'required' must be an array of strings");
        }
        for (JsonNode name : required) {
            if (!name.isTextual()) {
                throw new SchemaException(path, "'required' must be an array of strings");
            }
            names.add(name.asText());
        }
        return names;
    }

    /**
     * The members from property {@code from} on, in order, optional ones skippable, then the closing brace. Memoized
     * by (from, first): a grammar quadratic, not exponential, in the number of optional properties.
     */
    private GrammarNode members(List<GrammarNode> keys, List<GrammarNode> values, boolean[] required, int from,
                                boolean first, Map<Integer, GrammarNode> memo) {
        int memoKey = from * 2 + (first ? 1 : 0);
        GrammarNode known = memo.get(memoKey);
        if (known != null) {
            return known;
        }
        List<GrammarNode> options = new ArrayList<>();
        boolean restOptional = true;
        for (int k = from; k < keys.size(); k++) {
            GrammarNode separator = first ? EMPTY : sequence(literal(","), space);
            options.add(sequence(separator, keys.get(k), space, values.get(k),
                    members(keys, values, required, k + 1, false, memo)));
            if (required[k]) {
                restOptional = false;
                break;
            }
        }
        if (restOptional) {
            options.add(literal("}"));
        }
        GrammarNode node = choice(options);
        memo.put(memoKey, node);
        return node;
    }

    private GrammarNode reference(String pointer, String path, Set<String> unguardedRefs) {
        if (!pointer.equals("#") && !pointer.startsWith("#/")) {
            throw new SchemaException(path + "/$ref", "only local references (#/$defs/...) are supported, not '" + pointer + "'");
        }
        if (unguardedRefs.contains(pointer)) {
            throw new SchemaException(path + "/$ref", "'" + pointer + "' refers to itself without an object or array in between");
        }
        GrammarNode.Reference known = references.get(pointer);
        if (known != null) {
            return known;
        }
        JsonNode target = root.at(pointer.substring(1));
        if (target.isMissingNode()) {
            throw new SchemaException(path + "/$ref", "'" + pointer + "' does not exist");
        }
        GrammarNode.Reference ref = new GrammarNode.Reference(pointer);
        references.put(pointer, ref);
        Set<String> unguarded = new HashSet<>(unguardedRefs);
        unguarded.add(pointer);
        if (++referenceDepth > MAX_REFERENCE_DEPTH) {
            throw new SchemaException(path + "/$ref", "references lead through more than " + MAX_REFERENCE_DEPTH
                    + " others");
        }
        try {
            ref.bind(node(target, pointer, unguarded));
        } finally {
            referenceDepth--;
        }
        return ref;
    }

    /** Any JSON value (for json_object, and schemas that say nothing). */
    private GrammarNode any() {
        if (anyValue == null) {
            GrammarNode.Reference value = new GrammarNode.Reference("any");
            anyValue = value;
            value.bind(choice(List.of(object(value), array(value), GrammarNode.string(), GrammarNode.number(false),
                    literal("true"), literal("false"), literal("null"))));
        }
        return anyValue;
    }

    /** An object with any string keys whose values follow {@code value}. */
    private GrammarNode object(GrammarNode value) {
        GrammarNode member = sequence(GrammarNode.string(), literal(":"), space, value);
        return sequence(literal("{"), choice(List.of(literal("}"),
                sequence(GrammarNode.separated(member, sequence(literal(","), space)), literal("}")))));
    }

    private GrammarNode array(GrammarNode item) {
        return sequence(literal("["), choice(List.of(literal("]"),
                sequence(GrammarNode.separated(item, sequence(literal(","), space)), literal("]")))));
    }

    private static String json(JsonNode value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String escape(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }
}
