package io.zse.backend;

/** An explicitly requested backend cannot run here; the message says why. */
public final class BackendUnavailableException extends RuntimeException {
    public BackendUnavailableException(String message) {
        super(message);
    }
}
