package io.zse.api;

import io.zse.format.MappedFiles;
import io.zse.format.MappedReadException;
import io.zse.serve.AdmissionException;
import org.jboss.logging.Logger;

import java.util.Optional;
import java.util.UUID;

/** What a failure means to the client, in OpenAI's shape; our own bugs are logged with an incident id it can quote. */
final class Failures {
    private static final Logger LOG = Logger.getLogger(Failures.class);

    private Failures() {
    }

    /**
     * The answer for {@code t}: an {@link ApiException} anywhere in its causes (futures and Funqy wrap what the code
     * threw); a refused admission or a model file that can no longer be read (a native kernel's fault, or the JVM's
     * for a Java kernel's read while a mapped file has shrunk) is 503, so the client retries elsewhere;
     * anything else is a 500 whose stack trace is logged under the incident id.
     */
    static ApiException toApi(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            switch (c) {
                case ApiException api -> {
                    return api;
                }
                case AdmissionException refused -> {
                    return ApiException.unavailable(refused.getMessage(), refused.retryAfterSeconds());
                }
                case MappedReadException fault -> {
                    return outOfService(fault);
                }
                case InternalError jvm -> {
                    Optional<MappedReadException> fault = MappedFiles.explain(jvm);
                    if (fault.isPresent()) {
                        return outOfService(fault.get());
                    }
                }
                default -> {
                }
            }
        }
        return ApiException.internal(incident(t));
    }

    private static ApiException outOfService(MappedReadException fault) {
        LOG.errorf("request failed: %s", fault.getMessage());
        return ApiException.outOfService(fault.getMessage());
    }

    /** Logs {@code cause} (null: none known) under a new incident id and returns the id. */
    static String incident(Throwable cause) {
        String id = UUID.randomUUID().toString().substring(0, 8);
        LOG.errorf(cause, "request failed (incident %s)", id);
        return id;
    }
}
