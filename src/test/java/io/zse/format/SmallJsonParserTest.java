package io.zse.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SmallJsonParserTest {

    /** Every config and tokenizer config we ship or test with parses to the same tree Jackson's parser builds. */
    @Test
    void realConfigFilesParseAsJacksonDoes() throws Exception {
        List<Path> files;
        try (Stream<Path> walk = Stream.concat(Files.walk(Path.of("src/test/resources")),
                Files.isDirectory(Path.of("../shared/tokenizers")) ? Files.walk(Path.of("../shared/tokenizers")) : Stream.empty())) {
            files = walk.filter(p -> p.getFileName().toString().matches("(tokenizer_)?config\\.json|generation_config\\.json"))
                    .toList();
        }
        assertTrue(files.size() >= 3, "found " + files);
        ObjectMapper jackson = new ObjectMapper();
        for (Path file : files) {
            byte[] bytes = Files.readAllBytes(file);
            JsonNode expected = jackson.readTree(bytes);
            assertEquals(normalise(expected), normalise(SmallJsonParser.parse(bytes, 0, bytes.length, file.toString())),
                    file.toString());
        }
    }

    /** Jackson picks int/long/BigInteger and float/double node types by size; compare values, not node classes. */
    private static String normalise(JsonNode node) throws Exception {
        return new ObjectMapper().writeValueAsString(new ObjectMapper().readTree(node.toString()));
    }

    @Test
    void integersBeyondLongAndEscapes() {
        JsonNode o = SmallJsonParser.parse("{\"model_max_length\": 1000000000000000019884624838656, \"n\": -7, "
                + "\"x\": 1.5e-5, \"s\": \"a\\u00e9\\n\\\"q\\\"\\/\", \"t\": [true, false, null]}", "test");
        assertEquals(new BigInteger("1000000000000000019884624838656"), o.get("model_max_length").bigIntegerValue());
        assertEquals(-7, o.get("n").asInt());
        assertEquals(1.5e-5, o.get("x").asDouble());
        assertEquals("aé\n\"q\"/", o.get("s").asText());
        assertEquals(3, o.get("t").size());
        assertTrue(o.get("t").get(2).isNull());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "\"abc", "\"a\\", "\"\\u12\"", "\"\\uzzzz\"",
            "{\"a\": 1} x", "{\"a\": 1e}", "tru"})
    void malformedInputNamesTheDocument(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SmallJsonParser.parse(text, "my.json"));
        assertTrue(e.getMessage().startsWith("my.json is not valid JSON: "), e.getMessage());
    }

    /** Nesting past 256 levels is refused by name, not a stack overflow; 256 levels still parse. */
    @Test
    void deepNestingIsRefused() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SmallJsonParser.parse(deep, "my.json"));
        assertTrue(e.getMessage().contains("nested deeper than 256"), e.getMessage());
        String objects = "{\"a\":".repeat(255) + "[1]" + "}".repeat(255);
        assertEquals(1, SmallJsonParser.parse(objects, "ok.json").at("/a".repeat(255) + "/0").asInt());
    }
}
