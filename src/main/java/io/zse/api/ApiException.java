package io.zse.api;

import java.util.Map;

/**
 * An error the client gets in OpenAI's shape: {@code {"error": {"message", "type", "param", "code"}}} with an HTTP
 * status and, for 429/503, a Retry-After.
 */
public final class ApiException extends RuntimeException {
    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final int retryAfterSeconds;
    private final Map<String, String> headers;

    private ApiException(int status, String type, String message, String param, String code, int retryAfterSeconds,
                         Map<String, String> headers) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfterSeconds = retryAfterSeconds;
        this.headers = Map.copyOf(headers);
    }

    /** 400: the request is wrong; {@code param} names the offending parameter when there is one. */
    public static ApiException invalid(String message, String param) {
        return new ApiException(400, "invalid_request_error", message, param, null, 0, Map.of());
    }

    public static ApiException invalid(String message, String param, String code) {
        return new ApiException(400, "invalid_request_error", message, param, code, 0, Map.of());
    }

    /** 401 with the challenge RFC 6750 asks for, naming the scheme clients must use. */
    public static ApiException unauthorized(String message) {
        return new ApiException(401, "invalid_request_error", message, null, "invalid_api_key", 0,
                Map.of("WWW-Authenticate", "Bearer"));
    }

    /** 400 for a body whose framing is broken; the connection cannot carry another request, so it is closed. */
    public static ApiException unreadableBody(String message) {
        return new ApiException(400, "invalid_request_error", message, null, "invalid_body", 0,
                Map.of("Connection", "close"));
    }

    /** 408: the request's headers or body did not arrive in time; the connection is closed. */
    public static ApiException timedOut(String message) {
        return new ApiException(408, "invalid_request_error", message, null, "request_timeout", 0,
                Map.of("Connection", "close"));
    }

    public static ApiException notFound(String message, String param, String code) {
        return new ApiException(404, "invalid_request_error", message, param, code, 0, Map.of());
    }

    /** 405 with the Allow header RFC 9110 asks for ({@code allowed}: the methods the path takes; null if unknown). */
    public static ApiException methodNotAllowed(String message, String allowed) {
        return new ApiException(405, "invalid_request_error", message, null, "method_not_allowed", 0,
                allowed == null ? Map.of() : Map.of("Allow", allowed));
    }

    public static ApiException tooLarge(long limit) {
        return new ApiException(413, "invalid_request_error", "the request body is larger than " + limit + " bytes",
                null, "request_too_large", 0, Map.of());
    }

    public static ApiException rateLimited(String message, String type, int retryAfterSeconds, Map<String, String> headers) {
        return new ApiException(429, type, message, null, "rate_limit_exceeded", retryAfterSeconds, headers);
    }

    public static ApiException unavailable(String message, int retryAfterSeconds) {
        return new ApiException(503, "server_error", message, null, "service_unavailable", retryAfterSeconds, Map.of());
    }

    /** 503 for good: the loaded model cannot serve any more (its weights failed their check, or its file shrank). */
    public static ApiException outOfService(String reason) {
        return unavailable("the model was taken out of service: " + reason, 30);
    }

    /** 499 (nginx's "client closed request"): the work stops; no one is left to read the answer. */
    public static ApiException clientGone() {
        return new ApiException(499, "invalid_request_error", "the client closed the connection", null,
                "client_closed_request", 0, Map.of());
    }

    /** 500: a bug; the message carries an id to find the logged stack trace, never the trace itself. */
    public static ApiException internal(String incident) {
        return new ApiException(500, "server_error", "the server had an error processing the request (incident "
                + incident + ")", null, null, 0, Map.of());
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }

    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** Extra response headers (rate-limit state). */
    public Map<String, String> headers() {
        return headers;
    }
}
