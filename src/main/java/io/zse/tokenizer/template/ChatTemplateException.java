package io.zse.tokenizer.template;

/** A chat template failed to compile or render: a syntax error, {@code raise_exception(...)}, or misuse of a value. */
public final class ChatTemplateException extends RuntimeException {
    public ChatTemplateException(String message) {
        super(message);
    }

    public ChatTemplateException(String message, Throwable cause) {
        super(message, cause);
    }
}
