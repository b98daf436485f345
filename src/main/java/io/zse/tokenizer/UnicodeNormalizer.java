package io.zse.tokenizer;

/** NFC, NFD, NFKC or NFKD. */
record UnicodeNormalizer(java.text.Normalizer.Form form) implements Normalizer {
    @Override
    public String normalize(String text) {
        return java.text.Normalizer.normalize(text, form);
    }
}
