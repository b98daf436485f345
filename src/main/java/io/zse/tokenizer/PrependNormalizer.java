package io.zse.tokenizer;

/** Prepends a fixed string to non-empty text (SentencePiece's leading "▁"). */
record PrependNormalizer(String prefix) implements Normalizer {
    @Override
    public String normalize(String text) {
        return text.isEmpty() ? text : prefix + text;
    }
}
