package io.zse.api;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** Where a request's output goes: an SSE stream, a JSON response, a Funqy result. Called on the engine thread. */
public interface CompletionSink {
    /** A stream chunk (only for streamed requests). */
    void chunk(ObjectNode chunk);

    /** The end: the full response for a non-streamed request, null for a stream. */
    void complete(ObjectNode response);

    /** The request failed after it was admitted. */
    void fail(ApiException error);

    /**
     * The run was cancelled (its client left, or it could not be admitted) and no end will come: drop whatever the sink
     * holds (timers). Idempotent; may come before, after or instead of {@link #fail}.
     */
    default void release() {
    }
}
