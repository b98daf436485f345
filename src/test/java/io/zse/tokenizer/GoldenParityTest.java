package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Ids and decoded text must equal what the Python tokenizers library produced (golden files; no Python here). */
class GoldenParityTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k:tinystories", "mistral-7b-v0.1:mistral-7b-v0.1", "qwen3:qwen3",
            "llama3:llama3", "llama3_1:llama3_1"})
    void generatedGoldens(String names) throws IOException {
        String[] parts = names.split(":");
        Tokenizer tokenizer = TestTokenizers.get(parts[0]);
        JsonNode golden;
        try (InputStream in = TestTokenizers.resource("/golden/tokenizers/" + parts[1] + ".json")) {
            golden = JSON.readTree(in);
        }
        List<String> failures = compare(tokenizer, golden);
        assertEquals(List.of(), failures, failures.size() + " mismatches");
    }

    private static List<String> compare(Tokenizer tokenizer, JsonNode golden) {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : golden.get("cases")) {
            String text = c.get("text").asText();
            check(failures, text, "ids", ints(c.get("ids")), tokenizer.encode(text, false));
            int[] withSpecial = ints(c.get("ids_with_special"));
            check(failures, text, "ids_with_special", withSpecial, tokenizer.encode(text, true));
            check(failures, text, "decoded", c.get("decoded").asText(), tokenizer.decode(withSpecial, false));
            check(failures, text, "decoded_skip", c.get("decoded_skip").asText(), tokenizer.decode(withSpecial, true));
        }
        for (JsonNode d : golden.get("decodes")) {
            int[] ids = ints(d.get("ids"));
            String label = Arrays.toString(ids);
            check(failures, label, "decoded", d.get("decoded").asText(), tokenizer.decode(ids, false));
            check(failures, label, "decoded_skip", d.get("decoded_skip").asText(), tokenizer.decode(ids, true));
        }
        return failures;
    }

    /** TinyStories variants using the components the real files do not; each golden file embeds its tokenizer. */
    @ParameterizedTest
    @ValueSource(strings = {"variant-metaspace", "variant-whitespace", "variant-whitespace-split",
            "variant-whitespace-pretok"})
    void componentVariants(String name) throws IOException {
        JsonNode golden;
        try (InputStream in = TestTokenizers.resource("/golden/tokenizers/" + name + ".json")) {
            golden = JSON.readTree(in);
        }
        assertEquals(List.of(), compare(TestTokenizers.get(name), golden));
    }

    /** The 15 hand-picked cases in ../shared/reference (decoded there is decode(ids) of the plain ids). */
    @ParameterizedTest
    @ValueSource(strings = {"qwen3", "mistral-7b-v0.1", "llama3", "llama3_1"})
    void sharedReferences(String name) throws IOException {
        Path file = TestTokenizers.SHARED.resolve("reference/tokenizers/" + name + ".json");
        Assumptions.assumeTrue(Files.isRegularFile(file), "not available: " + file);
        Tokenizer tokenizer = TestTokenizers.get(name);
        List<String> failures = new ArrayList<>();
        for (JsonNode c : JSON.readTree(file.toFile()).get("cases")) {
            String text = c.get("text").asText();
            int[] ids = ints(c.get("ids"));
            check(failures, text, "ids", ids, tokenizer.encode(text, false));
            check(failures, text, "ids_with_special", ints(c.get("ids_with_special")), tokenizer.encode(text, true));
            check(failures, text, "decoded", c.get("decoded").asText(), tokenizer.decode(ids, false));
            JsonNode tokens = c.get("tokens");
            for (int i = 0; i < ids.length; i++) {
                check(failures, text, "token " + i, tokens.get(i).asText(), tokenizer.token(ids[i]));
            }
        }
        assertEquals(List.of(), failures, failures.size() + " mismatches");
    }

    private static void check(List<String> failures, String input, String what, Object expected, Object actual) {
        boolean same = expected instanceof int[] e ? Arrays.equals(e, (int[]) actual) : expected.equals(actual);
        if (!same) {
            failures.add(what + " of " + JSON.valueToTree(input) + ": expected " + show(expected) + " got "
                    + show(actual));
        }
    }

    private static String show(Object value) {
        return value instanceof int[] ids ? Arrays.toString(ids) : JSON.valueToTree(value).toString();
    }

    static int[] ints(JsonNode array) {
        int[] values = new int[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asInt();
        }
        return values;
    }
}
