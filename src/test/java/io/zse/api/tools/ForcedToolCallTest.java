package io.zse.api.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import io.zse.generate.grammar.ConstrainedJsonTest;
import io.zse.generate.grammar.GrammarNode;
import io.zse.generate.grammar.JsonSchemaCompiler;
import io.zse.generate.grammar.TokenGrammar;
import io.zse.generate.grammar.TokenTrie;
import io.zse.tokenizer.TestTokenizers;
import io.zse.tokenizer.Tokenizer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * tool_choice "required" for every family: a forced call, written by a model that picks uniformly among the allowed
 * tokens of a real vocabulary, is always parsed back into calls whose arguments validate.
 */
class ForcedToolCallTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, String> PARAMETERS = Map.of(
            "get_weather", "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"unit\": "
                    + "{\"enum\": [\"c\", \"f\"]}, \"days\": {\"type\": \"integer\"}}, \"required\": [\"city\"]}",
            "get_time", "{\"type\": \"object\", \"properties\": {\"zone\": {\"type\": \"string\"}}, \"required\": "
                    + "[\"zone\"], \"additionalProperties\": false}");

    /** Byte-level (Qwen3, Llama 3.1 when ../shared has it) and SentencePiece with byte fallback (Mistral). */
    @ParameterizedTest
    @ValueSource(strings = {"qwen3", "llama3_1", "mistral-7b-v0.1"})
    void everyFamilysForcedCallParsesAndValidates(String vocabulary) throws Exception {
        forcedCallsParseAndValidate(vocabulary, shortest -> 120);
    }

    /**
     * max_tokens below the shortest call's length in bytes (but not below its length in the vocabulary's longest
     * tokens): the call still closes, on the longest tokens of a shortest call (it was cut off before).
     */
    @ParameterizedTest
    @ValueSource(strings = {"qwen3", "llama3_1", "mistral-7b-v0.1"})
    void aForcedCallClosesWithFewerTokensThanItsBytes(String vocabulary) throws Exception {
        forcedCallsParseAndValidate(vocabulary, shortest -> shortest * 2 / 3);
    }

    private static void forcedCallsParseAndValidate(String vocabulary, IntUnaryOperator budgetForShortest)
            throws Exception {
        Tokenizer tokenizer = Tokenizer.fromJson(TestTokenizers.json(vocabulary));
        TokenTrie trie = TokenTrie.of(tokenizer);
        Map<String, GrammarNode> functions = new LinkedHashMap<>();
        for (var e : PARAMETERS.entrySet()) {
            functions.put(e.getKey(), JsonSchemaCompiler.compileParameters(JSON.readTree(e.getValue()), false));
        }
        for (ToolCallFormat format : ToolCallFormat.values()) {
            for (boolean parallel : new boolean[]{false, true}) {
                TokenGrammar grammar = new TokenGrammar(JsonSchemaCompiler.finish(format.grammar(functions, parallel, tokenizer)),
                        trie);
                int budget = budgetForShortest.applyAsInt(grammar.minBytes());
                for (int run = 0; run < 4; run++) {
                    String output = ConstrainedJsonTest.generate(grammar, trie, new SplittableRandom(run), budget);
                    ToolCallParser parser = format.newParser();
                    ToolCallParser.Update first = parser.append(output);
                    ToolCallParser.Update end = parser.finish();
                    String content = first.content() + end.content();
                    List<ToolCall> calls = new java.util.ArrayList<>(first.calls());
                    calls.addAll(end.calls());
                    assertEquals("", content, format + ": " + output);
                    assertFalse(calls.isEmpty(), format + ": " + output);
                    if (!parallel) {
                        assertEquals(1, calls.size(), format + ": " + output);
                    }
                    for (ToolCall call : calls) {
                        JsonNode schema = JSON.readTree(PARAMETERS.get(call.name()));
                        var errors = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema)
                                .validate(JSON.readTree(call.arguments()));
                        assertTrue(errors.isEmpty(), format + ": " + output + " -> " + errors);
                    }
                }
            }
        }
    }
}
