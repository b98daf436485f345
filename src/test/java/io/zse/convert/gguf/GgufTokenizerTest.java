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
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

    /**
     * @param spaceRuns whether texts whose SentencePiece form holds a run of ▁ are compared. They are not for the
     *                  Mistral vocabulary: llama.cpp writes a vocabulary it converted from tokenizer.json (the fixture
     *                  has no tokenizer.model) with every score -1000 and no merges, so the merges are rebuilt from
     *                  token ids, and Mistral gives its space-run tokens (▁▁ = 259, ▁▁▁▁ = 260, ...) low ids but late
     *                  merges. GGUFs made from tokenizer.model carry the real scores, from which transformers derived
     *                  that tokenizer.json's merges in the first place.
     */
    @ParameterizedTest
    @CsvSource({"vocab-qwen3, qwen3, true", "vocab-mistral-7b-v0.1, mistral-7b-v0.1, false"})
    void idsAndTextMatchTheOriginalTokenizer(String vocab, String golden, boolean spaceRuns) throws IOException {
        Tokenizer tokenizer = tokenizer(vocab);
        JsonNode cases;
        try (InputStream in = getClass().getResourceAsStream("/golden/tokenizers/" + golden + ".json")) {
            cases = new ObjectMapper().readTree(in);
        }
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (JsonNode c : cases.get("cases")) {
            String text = c.get("text").asText();
            if (!spaceRuns && ("\u2581" + text.replace(' ', '\u2581')).contains("\u2581\u2581")) {
                continue;
            }
            check(failures, text, ints(c.get("ids")), tokenizer.encode(text, false));
            check(failures, text + " (with special)", ints(c.get("ids_with_special")), tokenizer.encode(text, true));
            assertEquals(c.get("decoded").asText(), tokenizer.decode(ints(c.get("ids_with_special")), false), text);
            assertEquals(c.get("decoded_skip").asText(), tokenizer.decode(ints(c.get("ids_with_special")), true), text);
            checked++;
        }
        assertTrue(failures.isEmpty(), failures.size() + " of " + checked + " texts differ: " + failures);
        assertTrue(checked > 10, "only " + checked + " cases");
        System.out.printf("%s: %d of %d golden texts compared, all equal%n", vocab, checked, cases.get("cases").size());
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
    }
}
