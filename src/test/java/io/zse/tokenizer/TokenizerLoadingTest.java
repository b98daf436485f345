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

    /**
     * Ids a hostile tokenizer gives (a vocab id of 2e9, an added token's -1 or 1.5, a precompiled form's token and
     * merge counts past its bytes, a merge naming an id the vocabulary lacks) are refused by name, before any table is
     * sized from them.
     */
    @Test
    void hostileIdsAndCountsAreRefused() {
        String tinystories = new String(TestTokenizers.json("tinystories-656k"), StandardCharsets.UTF_8);
        assertThrowsMentioning(tinystories.replace("\"<unk>\": 0,", "\"<unk>\": 2000000000,"), "outside 0..");
        for (String id : new String[]{"-1", "1.5", "\"3\""}) {
            assertThrowsMentioning(tinystories.replace("\"added_tokens\": [", "\"added_tokens\": [{\"id\": " + id
                    + ", \"content\": \"<zz>\", \"special\": true},"), "added token <zz> has the id");
        }
        byte[] binary = Tokenizer.fromJson(tinystories).toBinary();
        java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(binary).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int tokenCountAt = 8 + 4 + le.getInt(8);
        int tokens = le.getInt(tokenCountAt);
        byte[] manyTokens = binary.clone();
        java.nio.ByteBuffer.wrap(manyTokens).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(tokenCountAt, 0x7FFFFFF0);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Tokenizer.fromBinary(manyTokens)).getMessage()
                .contains("2147483632 tokens in"));
        int at = mergeStart(binary, tokenCountAt);
        int mergeCount = le.getInt(at);
        assertTrue(tokens > 0 && mergeCount > 0 && binary.length == at + 4 + 12 * mergeCount, "the layout as read");
        byte[] badMerge = binary.clone();
        java.nio.ByteBuffer.wrap(badMerge).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(at + 4, 999_999);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Tokenizer.fromBinary(badMerge)).getMessage()
                .contains("a merge names token id 999999"));
    }

    /** Where the merge count of a precompiled tokenizer lies: after the token lengths and the tokens' bytes. */
    private static int mergeStart(byte[] binary, int tokenCountAt) {
        java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(binary).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int tokens = le.getInt(tokenCountAt);
        int at = tokenCountAt + 4 + 4 * tokens;
        for (int i = 0; i < tokens; i++) {
            at += Math.max(0, le.getInt(tokenCountAt + 4 + 4 * i));
        }
        return at;
    }

    private static void assertThrowsMentioning(String json, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tokenizer.fromJson(json));
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    private static void assertRefused(String json, String message) {
        assertTrue(!json.equals(new String(TestTokenizers.json("tinystories-656k"), StandardCharsets.UTF_8)),
                "test edit did not apply for " + message);
        UnsupportedTokenizerException e = assertThrows(UnsupportedTokenizerException.class,
                () -> Tokenizer.fromJson(json));
        assertEquals(message, e.getMessage());
    }
}
