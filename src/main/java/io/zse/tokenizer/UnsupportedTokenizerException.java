package io.zse.tokenizer;

/** Thrown at load time when a tokenizer file uses a component or option this package does not implement exactly. */
public final class UnsupportedTokenizerException extends IllegalArgumentException {
    public UnsupportedTokenizerException(String message) {
        super(message);
    }
}
