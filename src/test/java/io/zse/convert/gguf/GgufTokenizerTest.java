package io.zse.convert.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tokenizer rebuilt from a GGUF file's metadata (vocab-only GGUFs written by llama.cpp's convert_hf_to_gguf.py from
 * the tokenizer.json files the golden tests use) against the ids and text Hugging Face's tokenizers library gives for
 * the original tokenizer.json (golden/tokenizers/*.json).
 */
class GgufTokenizerTest {
    @TempDir
    static Path dir;

    static Tokenizer tokenizer(String vocab) throws IOException {
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf(vocab, dir))) {
            return Tokenizer.fromJson(GgufTokenizer.fromMetadata(file.metadata()).tokenizerJson());
        }
    }

    @ParameterizedTest
    @CsvSource({"vocab-qwen3, qwen3", "vocab-mistral-7b-v0.1, mistral-7b-v0.1"})
    void idsAndTextMatchTheOriginalTokenizer(String vocab, String golden) throws IOException {
        assertGoldenParity(tokenizer(vocab), golden);
    }

    /**
     * The other kind of SentencePiece GGUF, one whose scores rank the pieces (llama.cpp copies them from a
     * tokenizer.model): scores falling with the id, whitespace-only pieces lowest, must give the same ids through the
     * score ranking.
     */
    @Test
    void scoresThatRankThePiecesGiveTheSameIds() throws IOException {
        Map<String, Object> metadata;
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf("vocab-mistral-7b-v0.1", dir))) {
            metadata = new HashMap<>(file.metadata());
        }
        GgufFile.GgufArray tokens = (GgufFile.GgufArray) metadata.get("tokenizer.ggml.tokens");
        GgufFile.GgufArray scores = (GgufFile.GgufArray) metadata.get("tokenizer.ggml.scores");
        List<Object> ranked = new ArrayList<>();
        for (int id = 0; id < tokens.size(); id++) {
            String token = (String) tokens.values().get(id);
            ranked.add(token.length() > 1 && token.chars().allMatch(c -> c == '\u2581') ? -1e9 : (double) -id);
        }
        metadata.put("tokenizer.ggml.scores", new GgufFile.GgufArray(scores.elementType(), ranked));
        assertGoldenParity(Tokenizer.fromJson(GgufTokenizer.fromMetadata(metadata).tokenizerJson()), "mistral-7b-v0.1");
    }

    private void assertGoldenParity(Tokenizer tokenizer, String golden) throws IOException {
        JsonNode cases;
        try (InputStream in = getClass().getResourceAsStream("/golden/tokenizers/" + golden + ".json")) {
            cases = new ObjectMapper().readTree(in);
        }
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (JsonNode c : cases.get("cases")) {
            String text = c.get("text").asText();
            check(failures, text, ints(c.get("ids")), tokenizer.encode(text, false));
            check(failures, text + " (with special)", ints(c.get("ids_with_special")), tokenizer.encode(text, true));
            assertEquals(c.get("decoded").asText(), tokenizer.decode(ints(c.get("ids_with_special")), false), text);
            assertEquals(c.get("decoded_skip").asText(), tokenizer.decode(ints(c.get("ids_with_special")), true), text);
            checked++;
        }
        assertTrue(failures.isEmpty(), failures.size() + " of " + checked + " texts differ: " + failures);
        assertEquals(320, checked, "golden cases");
    }

    /**
     * llama.cpp converts a SentencePiece vocabulary from tokenizer.json (this fixture has no tokenizer.model) with every
     * score -1000 and no merges, so the merges are rebuilt from ids alone; Mistral's space runs (▁▁ = 259,
     * ▁▁▁▁ = 260, ...) have low ids but its last merges. The rebuilt list must be the original, entry for entry.
     */
    @Test
    void mergesRebuiltFromAScorelessVocabularyAreTheOriginalOnes() throws IOException {
        JsonNode rebuilt;
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf("vocab-mistral-7b-v0.1", dir))) {
            rebuilt = new ObjectMapper().readTree(GgufTokenizer.fromMetadata(file.metadata()).tokenizerJson());
        }
        JsonNode original;
        try (InputStream in = getClass().getResourceAsStream("/tokenizers/mistral-7b-v0.1/tokenizer.json")) {
            original = new ObjectMapper().readTree(in);
        }
        JsonNode want = original.get("model").get("merges");
        JsonNode got = rebuilt.get("model").get("merges");
        assertEquals(58980, want.size());
        assertEquals(want.size(), got.size(), "merge count");
        for (int i = 0; i < want.size(); i++) {
            String expected = want.get(i).isTextual() ? want.get(i).asText()
                    : want.get(i).get(0).asText() + " " + want.get(i).get(1).asText();
            assertEquals(expected, got.get(i).get(0).asText() + " " + got.get(i).get(1).asText(), "merge " + i);
        }
    }

    private static void check(List<String> failures, String text, int[] want, int[] got) {
        if (!Arrays.equals(want, got)) {
            failures.add(text + ": " + Arrays.toString(want) + " vs " + Arrays.toString(got));
        }
    }

    private static int[] ints(JsonNode array) {
        int[] out = new int[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asInt();
        }
        return out;
    }

    @Test
    void chatTemplateAndSpecialTokensComeFromTheMetadata() throws IOException {
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf("vocab-qwen3", dir))) {
            GgufTokenizer.Files files = GgufTokenizer.fromMetadata(file.metadata());
            TokenizerConfig config = TokenizerConfig.parse(files.tokenizerConfigJson());
            assertEquals(file.metadata().get("tokenizer.chat_template"), config.chatTemplate());
            assertEquals("<|im_end|>", config.eosToken());
            Tokenizer tokenizer = Tokenizer.fromJson(files.tokenizerJson());
            assertEquals(List.of(151644), Arrays.stream(tokenizer.encode("<|im_start|>", false)).boxed().toList());
        }
    }

    @Test
    void mergesFromScoresFollowTransformers() {
        // generate_merges: every two-token split of each token, best score first, longer left piece first on ties.
        List<String> tokens = List.of("a", "b", "c", "ab", "bc", "abc");
        List<Double> scores = List.of(0.0, 0.0, 0.0, -1.0, -2.0, -0.5);
        List<String> merges = GgufTokenizer.mergesFromVocabulary(tokens, scores).stream()
                .map(m -> m[0] + " " + m[1]).toList();
        assertEquals(List.of("ab c", "a bc", "a b", "b c"), merges);
        // Without informative scores, by the merged token's id (the order BPE training added them).
        List<String> byId = GgufTokenizer.mergesFromVocabulary(tokens, List.of(-1000.0, -1000.0, -1000.0, -1000.0,
                -1000.0, -1000.0)).stream().map(m -> m[0] + " " + m[1]).toList();
        assertEquals(List.of("a b", "b c", "a bc", "ab c"), byId);
        // Whitespace-only pieces rank after every other token whatever their id.
        List<String> spaces = List.of("\u2581", "a", "\u2581\u2581", "\u2581a", "\u2581\u2581\u2581");
        List<String> withSpaces = GgufTokenizer.mergesFromVocabulary(spaces, List.of(-1000.0, -1000.0, -1000.0, -1000.0,
                -1000.0)).stream().map(m -> m[0] + " " + m[1]).toList();
        assertEquals(List.of("\u2581 a", "\u2581 \u2581", "\u2581 \u2581\u2581", "\u2581\u2581 \u2581"),
                withSpaces);
    }

    /** Merges are derived by trying every cut of a token: one too long for that is refused, not hours of work. */
    @Test
    void aTokenTooLongToDeriveMergesForIsRefused() {
        List<String> tokens = List.of("a", "aa", "a".repeat(GgufTokenizer.MAX_MERGED_TOKEN + 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GgufTokenizer.mergesFromVocabulary(tokens, null));
        assertTrue(e.getMessage().contains("token 2 is 4097 characters long"), e.getMessage());
        assertEquals(1, GgufTokenizer.mergesFromVocabulary(tokens.subList(0, 2), null).size());
    }
}
