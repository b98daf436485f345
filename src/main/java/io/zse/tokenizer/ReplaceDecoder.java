package io.zse.tokenizer;

import java.util.List;

/** Replaces a pattern inside every token (SentencePiece's "▁" back to " "). */
record ReplaceDecoder(TextPattern pattern, String content) implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        return tokens.stream().map(t -> pattern.replaceAll(t, content)).toList();
    }
}
