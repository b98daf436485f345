package io.zse.tokenizer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the incremental decoder emits, id by id, must always add up to decode of the whole sequence. */
class IncrementalDecoderTest {
    private static final List<String> TEXTS = List.of(
            "Hello 👋🏽 world 🤖🇩🇪!", " leading space and trailing ", "你好，世界！日本語 한국어", "a\n\nb\r\n\tc",
            "<s>[INST] hi [/INST] ok</s>", "<|im_start|>user\nhi 😀<|im_end|>\n", "Once upon a time 🐔🐶 the end.",
            "\u2581\u2581x  y", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ȸ \u0000 \uFFFD", "");

    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k", "mistral-7b-v0.1", "qwen3", "llama3", "variant-metaspace",
            "variant-whitespace", "variant-whitespace-pretok"})
    void emitsExactlyWhatFullDecodingGives(String name) {
        Tokenizer tokenizer = TestTokenizers.get(name);
        Random random = new Random(7);
        List<int[]> sequences = new ArrayList<>();
        for (String text : TEXTS) {
            sequences.add(tokenizer.encode(text, true));
        }
        int[] byteTokens = tokenizer.tokenId("<0xF0>").isPresent()
                ? java.util.stream.IntStream.range(0, 256)
                    .map(b -> tokenizer.tokenId(String.format("<0x%02X>", b)).orElseThrow()).toArray()
                : new int[0];
        for (int n = 0; n < 400; n++) {
            int[] ids = new int[1 + random.nextInt(40)];
            for (int i = 0; i < ids.length; i++) {
                double r = random.nextDouble();
                ids[i] = r < 0.3 && byteTokens.length > 0 ? byteTokens[random.nextInt(256)]
                        : r < 0.4 ? random.nextInt(Math.min(300, tokenizer.vocabSize()))
                        : random.nextInt(tokenizer.vocabSize());
            }
            sequences.add(ids);
        }
        for (int[] ids : sequences) {
            for (boolean skip : new boolean[]{false, true}) {
                IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(skip);
                StringBuilder streamed = new StringBuilder();
                for (int id : ids) {
                    String piece = decoder.next(id);
                    assertFalse(!piece.isEmpty() && Character.isHighSurrogate(piece.charAt(piece.length() - 1)),
                            "emitted half a character");
                    streamed.append(piece);
                }
                streamed.append(decoder.flush());
                assertEquals(tokenizer.decode(ids, skip), streamed.toString(),
                        () -> name + " " + java.util.Arrays.toString(ids));
            }
        }
    }

    /**
     * Ids that continue a prompt give what they add to the prompt's text: every text above cut at each id, where the
     * prompt ends on a whole character and decoding does not rewrite text across the cut.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tinystories-656k", "mistral-7b-v0.1", "qwen3", "llama3", "variant-metaspace",
            "variant-whitespace", "variant-whitespace-pretok"})
    void continuingAPromptEmitsWhatItAddsToThePromptsText(String name) {
        Tokenizer tokenizer = TestTokenizers.get(name);
        int checked = 0;
        for (String text : TEXTS) {
            int[] ids = tokenizer.encode(text, true);
            for (int cut = 0; cut <= ids.length; cut++) {
                int[] prompt = Arrays.copyOfRange(ids, 0, cut);
                for (boolean skip : new boolean[]{false, true}) {
                    String before = tokenizer.decode(prompt, skip);
                    String whole = tokenizer.decode(ids, skip);
                    if (before.endsWith("\uFFFD") || cut > 0 && tokenizer.continuesByteRun(prompt[cut - 1])
                            || !whole.startsWith(before)) {
                        continue;
                    }
                    IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(skip, prompt);
                    StringBuilder streamed = new StringBuilder();
                    for (int i = cut; i < ids.length; i++) {
                        streamed.append(decoder.next(ids[i]));
                    }
                    streamed.append(decoder.flush());
                    int at = cut;
                    assertEquals(whole.substring(before.length()), streamed.toString(),
                            () -> name + " cut at " + at + " of " + Arrays.toString(ids));
                    checked++;
                }
            }
        }
        assertTrue(checked > 100, checked + " cuts checked");
    }

    /** Decoded alone, a continuation's first SentencePiece space is dropped; after its prompt it is kept. */
    @Test
    void aContinuationKeepsItsLeadingSpace() {
        Tokenizer mistral = TestTokenizers.get("mistral-7b-v0.1");
        int[] there = {mistral.tokenId("\u2581there").orElseThrow(), mistral.tokenId("\u2581was").orElseThrow()};
        assertEquals(" there was", continued(mistral, mistral.encode("Once upon a time", true), there));
        assertEquals("there was", mistral.decode(there, true));
        // the demo model's "Hi" and what it generated after it (its pieces carry their spaces at the end)
        Tokenizer demo = TestTokenizers.get("tinystories-656k");
        int[] hi = {1, 1158};
        int[] generated = {80, 229, 1054, 154};
        String whole = demo.decode(IntStream.concat(IntStream.of(hi), IntStream.of(generated)).toArray(), true);
        assertEquals(whole.substring(demo.decode(hi, true).length()), continued(demo, hi, generated));
        assertTrue(continued(demo, hi, generated).startsWith(" "), continued(demo, hi, generated));
    }

    private static String continued(Tokenizer tokenizer, int[] prompt, int[] ids) {
        IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(true, prompt);
        StringBuilder text = new StringBuilder();
        for (int id : ids) {
            text.append(decoder.next(id));
        }
        return text.append(decoder.flush()).toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"mistral-7b-v0.1", "qwen3"})
    void holdsBackAnEmojiUntilItIsComplete(String name) {
        Tokenizer tokenizer = TestTokenizers.get(name);
        int[] ids = tokenizer.encode("ok 🤖 go", false);
        IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(false);
        List<String> pieces = new ArrayList<>();
        for (int id : ids) {
            pieces.add(decoder.next(id));
        }
        pieces.add(decoder.flush());
        for (String piece : pieces) {
            assertFalse(piece.contains("\uFFFD"), "partial UTF-8 emitted: " + pieces);
        }
        assertEquals(tokenizer.decode(ids, false), String.join("", pieces));
    }

    @ParameterizedTest
    @ValueSource(strings = {"mistral-7b-v0.1", "tinystories-656k"})
    void dropsTheSentencePieceLeadingSpaceOnlyAtTheStart(String name) {
        Tokenizer tokenizer = TestTokenizers.get(name);
        int[] ids = tokenizer.encode("Hello world", false);
        IncrementalDecoder decoder = tokenizer.newIncrementalDecoder(true);
        StringBuilder text = new StringBuilder();
        for (int id : ids) {
            text.append(decoder.next(id));
        }
        assertEquals("Hello world", text + decoder.flush());
    }
}
