package io.zse.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The exact bytes each token adds to the generated text, in the middle of a sequence: what constrained decoding matches
 * against a grammar. Byte-level BPE tokens map character by character to bytes (a token may hold half a UTF-8
 * character); {@code <0xNN>} tokens are their byte; other tokens are their decoded text. Special tokens have no bytes
 * here (null): they are control tokens, never text a grammar could match.
 */
public final class TokenBytes {
    private TokenBytes() {
    }

    /** Bytes per id, [vocabSize]; null for special tokens and ids the tokenizer does not know. */
    public static byte[][] of(Tokenizer tokenizer) {
        byte[][] bytes = new byte[tokenizer.vocabSize()][];
        boolean byteLevel = usesByteLevel(tokenizer.pipeline().decoder());
        Map<Integer, AddedToken> added = new HashMap<>();
        tokenizer.addedTokens().forEach(t -> added.put(t.id(), t));
        for (int id = 0; id < bytes.length; id++) {
            if (tokenizer.isSpecial(id)) {
                continue;
            }
            String token;
            try {
                token = tokenizer.token(id);
            } catch (IllegalArgumentException e) {
                continue; // a hole in the vocabulary
            }
            if (added.containsKey(id)) {
                bytes[id] = added.get(id).content().getBytes(StandardCharsets.UTF_8);
            } else if (byteLevel) {
                bytes[id] = byteLevel(token);
            } else if (ByteFallbackDecoder.byteOf(token) >= 0) {
                bytes[id] = new byte[]{(byte) ByteFallbackDecoder.byteOf(token)};
            } else {
                bytes[id] = midSequenceText(tokenizer, id).getBytes(StandardCharsets.UTF_8);
            }
        }
        return bytes;
    }

    private static boolean usesByteLevel(Decoder decoder) {
        return decoder instanceof ByteLevelDecoder
                || decoder instanceof SequenceDecoder s && s.steps().stream().anyMatch(TokenBytes::usesByteLevel);
    }

    private static byte[] byteLevel(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            int b = ByteLevelAlphabet.byteOf(token.charAt(i));
            if (b < 0) {
                return token.getBytes(StandardCharsets.UTF_8);
            }
            out[i] = (byte) b;
        }
        return out;
    }

    /**
     * Decoders strip or rewrite the start of a sequence (SentencePiece's leading space): the token's text after
     * itself, minus its text alone, is what it adds anywhere later.
     */
    private static String midSequenceText(Tokenizer tokenizer, int id) {
        String alone = tokenizer.decode(new int[]{id}, false);
        String twice = tokenizer.decode(new int[]{id, id}, false);
        return twice.startsWith(alone) ? twice.substring(alone.length()) : alone;
    }
}
