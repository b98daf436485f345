package io.zse.tokenizer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Loading: JSON and the binary form agree, load times are reported, unsupported parts are refused by name. */
class TokenizerLoadingTest {
    private static final String SAMPLE = "Hello 👋🏽 world, don't <|im_start|>user\n 12345 naïve 你好 <s> ▁x";

    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k", "mistral-7b-v0.1", "qwen3"})
    void binaryFormRoundTrips(String name) {
        Tokenizer fromJson = TestTokenizers.get(name);
        byte[] binary = fromJson.toBinary();
        Tokenizer fromBinary = Tokenizer.fromBinary(binary);
        assertEquals(fromJson.vocabSize(), fromBinary.vocabSize());
        int[] ids = fromJson.encode(SAMPLE, true);
        assertArrayEquals(ids, fromBinary.encode(SAMPLE, true));
        assertEquals(fromJson.decode(ids, false), fromBinary.decode(ids, false));
        assertArrayEquals(binary, fromBinary.toBinary());
    }

    @Test
    void reportsQwen3LoadTimes() {
        byte[] json = TestTokenizers.json("qwen3");
        long t0 = System.nanoTime();
        Tokenizer first = Tokenizer.fromJson(json);
        long t1 = System.nanoTime();
        byte[] binary = first.toBinary();
        long t2 = System.nanoTime();
        Tokenizer.fromBinary(binary);
        long t3 = System.nanoTime();
        long jsonWarm = Long.MAX_VALUE;
        long binaryWarm = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long a = System.nanoTime();
            Tokenizer.fromJson(json);
            long b = System.nanoTime();
            Tokenizer.fromBinary(binary);
            long c = System.nanoTime();
            jsonWarm = Math.min(jsonWarm, b - a);
            binaryWarm = Math.min(binaryWarm, c - b);
        }
        System.out.printf("qwen3 load: json first %d ms (%d KiB), binary first %d ms (%d KiB), "
                        + "json warm %d ms, binary warm %d ms%n", (t1 - t0) / 1_000_000, json.length / 1024,
                (t3 - t2) / 1_000_000, binary.length / 1024, jsonWarm / 1_000_000, binaryWarm / 1_000_000);
        assertTrue(binary.length < json.length);
    }

    @Test
    void lookupsAndTokens() {
        Tokenizer qwen = TestTokenizers.get("qwen3");
        assertEquals(151669, qwen.vocabSize());
        assertEquals(151644, qwen.tokenId("<|im_start|>").orElseThrow());
        assertEquals("<|im_start|>", qwen.token(151644));
        assertEquals(9707, qwen.tokenId("Hello").orElseThrow());
        assertTrue(qwen.tokenId("no such token").isEmpty());
        assertTrue(qwen.isSpecial(151644));
        assertThrows(IllegalArgumentException.class, () -> qwen.token(-1));
    }

    @Test
    void refusesUnsupportedComponentsByName() {
        String tinystories = new String(TestTokenizers.json("tinystories-656k"), StandardCharsets.UTF_8);
        assertRefused(tinystories.replace("\"pre_tokenizer\": null", "\"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}"),
                "unsupported pre_tokenizer type 'BertPreTokenizer'");
        assertRefused(tinystories.replace("\"normalizer\": {", "\"normalizer\": {\"type\": \"Precompiled\"}, \"x\": {"),
                "unsupported normalizer type 'Precompiled'");
        assertRefused(tinystories.replace("\"type\": \"Fuse\"", "\"type\": \"CTC\""), "unsupported decoder type 'CTC'");
        assertRefused(tinystories.replace("\"type\": \"TemplateProcessing\"", "\"type\": \"Fancy\""),
                "unsupported post_processor type 'Fancy'");
        assertRefused(tinystories.replace("\"type\": \"BPE\"", "\"type\": \"Unigram\""),
                "unsupported model type 'Unigram'");
        assertRefused(tinystories.replace("\"truncation\": null", "\"truncation\": {\"max_length\": 5}"),
                "unsupported truncation settings (must be null)");
    }

    private static void assertRefused(String json, String message) {
        assertTrue(!json.equals(new String(TestTokenizers.json("tinystories-656k"), StandardCharsets.UTF_8)),
                "test edit did not apply for " + message);
        UnsupportedTokenizerException e = assertThrows(UnsupportedTokenizerException.class,
                () -> Tokenizer.fromJson(json));
        assertEquals(message, e.getMessage());
    }
}
