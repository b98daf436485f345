package io.zse.tokenizer;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
