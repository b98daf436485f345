package io.zse.tokenizer;

/** An entry of "added_tokens": text matched in the input before the model runs, with Hugging Face's options. */
public record AddedToken(int id, String content, boolean special, boolean singleWord, boolean lstrip, boolean rstrip,
                         boolean normalized) {
}
