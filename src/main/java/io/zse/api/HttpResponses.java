package io.zse.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;

/** Writes JSON bodies and OpenAI-shaped errors (with Retry-After and rate-limit headers) to Vert.x responses. */
final class HttpResponses {
    private HttpResponses() {
    }

    /** @return when the body has been written (at once when the response was already over) */
    static Future<Void> json(HttpServerResponse response, int status, JsonNode body) {
        if (response.ended() || response.closed()) {
            return Future.succeededFuture();
        }
        return response.setStatusCode(status).putHeader("Content-Type", "application/json").end(write(body));
    }

    static Future<Void> error(HttpServerResponse response, ApiException e) {
        if (response.headWritten()) {
            return Future.succeededFuture();
        }
        e.headers().forEach(response::putHeader);
        if (e.retryAfterSeconds() > 0) {
            response.putHeader("Retry-After", Integer.toString(e.retryAfterSeconds()));
        }
        return json(response, e.status(), OpenAiShapes.error(e));
    }

    static String write(JsonNode node) {
        try {
            return OpenAiShapes.JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
