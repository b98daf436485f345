package io.zse.serve;

/** The engine cannot take a request now (queue full, shutting down); the client should retry later. */
public final class AdmissionException extends RuntimeException {
    private final int retryAfterSeconds;

    public AdmissionException(String message, int retryAfterSeconds) {
        super(message);
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
