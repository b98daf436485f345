package io.zse.tokenizer;

/** Adds special tokens around an encoded sequence (Hugging Face "post_processor", single-sequence case). */
interface PostProcessor {
    int[] process(int[] ids, boolean addSpecialTokens);
}
