package io.zse.api;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.concurrent.CompletableFuture;

/** Collects a non-streamed request's response (or error) into a future. */
final class JsonSink implements CompletionSink {
    final CompletableFuture<ObjectNode> result = new CompletableFuture<>();

    @Override
    public void chunk(ObjectNode chunk) {
        throw new IllegalStateException("a non-streamed request got a stream chunk");
    }

    @Override
    public void complete(ObjectNode response) {
        result.complete(response);
    }

    @Override
    public void fail(ApiException error) {
        result.completeExceptionally(error);
    }
}
