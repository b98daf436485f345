package io.zse.tokenizer;

/** Replaces every match of a literal or regex pattern. */
record ReplaceNormalizer(TextPattern pattern, String content) implements Normalizer {
    @Override
    public String normalize(String text) {
        return pattern.replaceAll(text, content);
    }
}
