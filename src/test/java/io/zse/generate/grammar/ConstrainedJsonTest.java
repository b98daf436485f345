package io.zse.generate.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.zse.TestModels;
import io.zse.generate.TokenConstraint;
import io.zse.tokenizer.TestTokenizers;
import io.zse.tokenizer.Tokenizer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Schemas compiled to token constraints over the real Qwen3 vocabulary (151K tokens), driven by a "model" that picks
 * uniformly among the allowed tokens (the worst case: it never wants to close anything). Every output must parse,
 * validate against its schema with an independent JSON Schema library, and end within its token budget.
 */
public class ConstrainedJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Tokenizer qwen;
    private static TokenTrie trie;

    @BeforeAll
    static void load() {
        qwen = Tokenizer.fromJson(TestTokenizers.json("qwen3"));
        trie = TokenTrie.of(qwen);
    }

    static final String PERSON = """
            {"type": "object", "properties": {
              "name": {"type": "string"},
              "age": {"type": "integer"},
              "height": {"type": "number"},
              "admin": {"type": "boolean"},
              "nickname": {"type": ["string", "null"]},
              "role": {"enum": ["user", "admin", 3, null]},
              "version": {"const": "v1"},
              "tags": {"type": "array", "items": {"type": "string"}},
              "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                          "required": ["city", "zip"], "additionalProperties": false}
            }, "required": ["name", "age", "height", "admin", "nickname", "role", "version", "tags", "address"],
            "additionalProperties": false}""";

    static final String TREE = """
            {"type": "object", "$defs": {
              "node": {"type": "object", "properties": {
                "value": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
              }, "required": ["value", "children"], "additionalProperties": false}},
             "properties": {"root": {"$ref": "#/$defs/node"}, "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
             "required": ["root", "next"], "additionalProperties": false}""";

    static final String OPTIONAL = """
            {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"},
             "d": {"type": "number"}}, "required": ["b"]}""";

    @Test
    void strictSchemasAlwaysYieldValidOutput() throws Exception {
        for (String schema : new String[]{PERSON, TREE}) {
            runMany(JSON.readTree(schema), JsonSchemaCompiler.compile(JSON.readTree(schema), true), 8, 300);
        }
    }

    @Test
    void nonStrictSchemaMayLeaveOutOptionalProperties() throws Exception {
        JsonNode schema = JSON.readTree(OPTIONAL);
        runMany(schema, JsonSchemaCompiler.compile(schema, false), 12, 200);
    }

    @Test
    void jsonObjectModeWritesAnObject() throws Exception {
        JsonNode anyObject = JSON.readTree("{\"type\": \"object\"}");
        runMany(anyObject, JsonSchemaCompiler.anyObject(), 8, 200);
    }

    @Test
    void aTightBudgetStillEndsInValidJson() throws Exception {
        JsonNode schema = JSON.readTree(TREE);
        GrammarNode grammar = JsonSchemaCompiler.compile(schema, true);
        int min = new TokenGrammar(grammar, trie).minBytes();
        runMany(schema, grammar, 5, min + 3);
    }

    /**
     * Fewer tokens than the shortest output has bytes: the longest tokens of a shortest completion still close it
     * (before, every token was allowed then, and a tool call with a small max_tokens was cut off unparsed).
     */
    @Test
    void aBudgetShorterThanTheOutputsBytesStillEndsInValidJson() throws Exception {
        JsonNode schema = JSON.readTree(PERSON);
        GrammarNode grammar = JsonSchemaCompiler.compile(schema, true);
        int min = new TokenGrammar(grammar, trie).minBytes();
        runMany(schema, grammar, 5, min / 2);
    }

    @Test
    void unsupportedKeywordsAreRefusedByName() {
        SchemaException e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}, "required": ["id"],
                 "additionalProperties": false}"""), true));
        assertEquals("#/properties/id/pattern", e.path());
        assertTrue(e.getMessage().contains("'pattern' is not supported"), e.getMessage());

        e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}"""), true));
        assertTrue(e.getMessage().contains("additionalProperties"), e.getMessage());

        e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": {"id": {"type": "string"}}, "required": [],
                 "additionalProperties": false}"""), true));
        assertTrue(e.getMessage().contains("'id' is not"), e.getMessage());

        e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": {"x": {"$ref": "#/$defs/loop"}}, "required": ["x"],
                 "additionalProperties": false, "$defs": {"loop": {"anyOf": [{"$ref": "#/$defs/loop"}, {"type": "null"}]}}}
                """), true));
        assertTrue(e.getMessage().contains("refers to itself"), e.getMessage());
    }

    /** Both were once read as nothing at all: any object, nothing required. */
    @Test
    void propertiesAndRequiredOfTheWrongShapeAreRefused() {
        SchemaException e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": [1]}"""), false));
        assertEquals("#/properties", e.path());
        assertEquals("'properties' must be an object", e.reason());
        for (String required : new String[]{"\"a\"", "[\"a\", 1]"}) {
            e = assertThrows(SchemaException.class, () -> JsonSchemaCompiler.compile(JSON.readTree("""
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": %s}""".formatted(required)),
                    false));
            assertEquals("#/required", e.path());
            assertEquals("'required' must be an array of strings", e.reason());
        }
    }

    /** A chain of $refs recurses once a link: 256 links compile, 1500 are refused by name (once a stack overflow). */
    @Test
    void longReferenceChainsAreRefused() throws Exception {
        assertTrue(JsonSchemaCompiler.compile(JSON.readTree(referenceChain(255)), false) != null);
        SchemaException e = assertThrows(SchemaException.class,
                () -> JsonSchemaCompiler.compile(JSON.readTree(referenceChain(1500)), false));
        assertTrue(e.getMessage().contains("references lead through more than 256 others"), e.getMessage());
    }

    /**
     * Output nested past the parser's depth refuses the byte that would open one more level, as a byte the schema
     * forbids: here the request goes on and can still close what it opened (it once failed with a 500).
     */
    @Test
    void nestingPastTheParsersDepthRefusesTheOpeningByte() throws Exception {
        GrammarState state = GrammarState.start(JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "array", "items": {"$ref": "#"}}"""), false));
        int depth = 0;
        for (GrammarState next; (next = state.advance('[')) != null && depth < 10_000; depth++) {
            state = next;
        }
        assertTrue(depth > 1000 && depth < 10_000, depth + " levels opened");
        for (int i = 0; i < depth; i++) {
            state = state.advance(']');
            assertTrue(state != null, "closing level " + i);
        }
        assertTrue(state.complete());
    }

    /**
     * A level that must nest further than its opening byte shows (an object whose first required property nests three
     * objects deep, then such an object or null): at the parser's depth limit its opening byte is refused, where
     * once it was accepted and a byte inside its first property then could not be, leaving no way to finish.
     */
    @Test
    void aLevelThatCouldNotBeClosedIsNotOpened() throws Exception {
        GrammarState state = GrammarState.start(JsonSchemaCompiler.compile(JSON.readTree("""
                {"type": "object", "properties": {"v": {"$ref": "#/$defs/level"}}, "required": ["v"],
                 "additionalProperties": false, "$defs": {"level": {"anyOf": [{"type": "null"},
                   {"type": "object", "properties": {
                     "b": {"type": "object", "properties": {"c": {"type": "object", "properties": {
                           "d": {"type": "object", "properties": {"e": {"type": "null"}}, "required": ["e"],
                                 "additionalProperties": false}}, "required": ["d"], "additionalProperties": false}},
                           "required": ["c"], "additionalProperties": false},
                     "a": {"$ref": "#/$defs/level"}},
                    "required": ["b", "a"], "additionalProperties": false}]}}}"""), true))
                .advance("{\"v\":".getBytes(StandardCharsets.UTF_8));
        byte[] level = "{\"b\":{\"c\":{\"d\":{\"e\":null}}},\"a\":".getBytes(StandardCharsets.UTF_8);
        int depth = 0;
        while (depth < 10_000) {
            GrammarState s = state;
            int written = 0;
            for (byte b : level) {
                GrammarState next = s.advance(b);
                if (next == null) {
                    break;
                }
                s = next;
                written++;
            }
            if (written == 0) {
                break;
            }
            assertEquals(level.length, written, "a level opened at depth " + depth + " cannot be written out");
            state = s;
            depth++;
        }
        assertTrue(depth > 100 && depth < 10_000, depth + " levels opened");
        state = state.advance("null".getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i <= depth && state != null; i++) {
            state = state.advance('}');
        }
        assertTrue(state != null && state.complete(), "every level closes");
    }

    /** {"$ref": a0}, a0 -> a1 -> ... -> a{links} = a string. */
    private static String referenceChain(int links) {
        StringBuilder defs = new StringBuilder();
        for (int i = 0; i < links; i++) {
            defs.append("\"a").append(i).append("\": {\"$ref\": \"#/$defs/a").append(i + 1).append("\"}, ");
        }
        defs.append("\"a").append(links).append("\": {\"type\": \"string\"}");
        return "{\"$defs\": {" + defs + "}, \"$ref\": \"#/$defs/a0\"}";
    }

    /** Byte-level BPE (Qwen3) and SentencePiece with byte fallback (Mistral): a token's bytes are what it decodes to. */
    @ParameterizedTest
    @ValueSource(strings = {"qwen3", "mistral-7b-v0.1"})
    void tokenBytesAgreeWithTheDecoder(String vocabulary) {
        Tokenizer tokenizer = Tokenizer.fromJson(TestTokenizers.json(vocabulary));
        TokenTrie trie = TokenTrie.of(tokenizer);
        SplittableRandom random = new SplittableRandom(7);
        int anchor = tokenizer.tokenId(vocabulary.startsWith("qwen") ? "a" : "▁a").orElseThrow();
        for (int i = 0; i < 3000; i++) {
            int id = random.nextInt(tokenizer.vocabSize());
            byte[] bytes = trie.bytes(id);
            if (bytes == null) {
                continue; // a special token
            }
            String expected = tokenizer.decode(new int[]{anchor, id}, false);
            String actual = tokenizer.decode(new int[]{anchor}, false) + new String(bytes, StandardCharsets.UTF_8);
            if (!actual.contains("\uFFFD") && !expected.contains("\uFFFD")) {
                assertEquals(expected, actual, "token " + id);
            }
        }
    }

    @Test
    void aVocabularyThatCannotSpellJsonIsNamed() {
        Tokenizer stories = Tokenizer.load(TestModels.tinyStories().resolve("tokenizer.json"));
        TokenGrammar grammar = new TokenGrammar(JsonSchemaCompiler.anyObject(), TokenTrie.of(stories));
        assertTrue(grammar.missingByte() >= 0);
        assertEquals(-1, new TokenGrammar(JsonSchemaCompiler.anyObject(), trie).missingByte());
    }

    private static void runMany(JsonNode schema, GrammarNode grammar, int runs, int budget) throws Exception {
        var validator = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema);
        TokenGrammar tokens = new TokenGrammar(grammar, trie);
        for (int run = 0; run < runs; run++) {
            String text = generate(tokens, trie, new SplittableRandom(run), budget);
            JsonNode value = JSON.readTree(text);
            Set<ValidationMessage> errors = validator.validate(value);
            assertTrue(errors.isEmpty(), text + " -> " + errors);
        }
    }

    /**
     * Uniform choices among the allowed tokens (an end-of-sequence id among them once the output may end) until the
     * constraint says the output is complete, the end id is drawn, or the budget is spent on a complete output.
     */
    public static String generate(TokenGrammar grammar, TokenTrie trie, SplittableRandom random, int budget) {
        int end = trie.vocabSize();
        TokenConstraint constraint = grammar.newConstraint(Set.of(end), new int[0]);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int used = 0; used < budget; used++) {
            BitSet allowed = constraint.allowed(budget - used);
            int pick = random.nextInt(allowed.cardinality());
            int token = allowed.nextSetBit(0);
            for (int i = 0; i < pick; i++) {
                token = allowed.nextSetBit(token + 1);
            }
            if (token == end) {
                return out.toString(StandardCharsets.UTF_8);
            }
            constraint.accept(token);
            out.writeBytes(trie.bytes(token));
            if (constraint.complete()) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }
        assertTrue(constraint.allowed(1).get(end), "not complete within " + budget + " tokens: "
                + out.toString(StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }
}
