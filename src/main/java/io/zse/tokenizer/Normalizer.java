package io.zse.tokenizer;

/** Rewrites a piece of input text before pre-tokenization (Hugging Face "normalizer"). */
interface Normalizer {
    String normalize(String text);
}
