package io.zse.tokenizer;

/** Rewrites a piece of input text before pre-tokenization (Hugging Face "normalizer"). */
interface Normalizer {
    String normalize(String text);

    /**
     * Whether the first character of {@code text} still starts the normalized text (so it keeps original offset 0,
     * which Metaspace's "first" prepend scheme looks at). Only normalizers that delete leading text say no.
     */
    default boolean keepsStart(String text) {
        return true;
    }
}
