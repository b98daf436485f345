package io.zse.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;

/**
 * A Server-Sent Events response exactly as OpenAI writes it: {@code data: <json>\n\n} per chunk, then
 * {@code data: [DONE]\n\n}. While nothing has been written for a heartbeat interval (queueing, a long prefill) it
 * sends an SSE comment so proxies and clients keep the connection open. Chunks come from the engine thread, heartbeats
 * from the event loop; each write is one whole event. The heartbeat timer is the one thing here that outlives a request
 * on its own (Vert.x keeps it, and it keeps the stream, response and run), so every way a stream ends cancels it.
 */
final class SseStream implements CompletionSink {
    private final HttpServerResponse response;
    private final Vertx vertx;
    private final long timer;
    private volatile long lastWrite = System.nanoTime();

    SseStream(HttpServerResponse response, Vertx vertx, long heartbeatMillis) {
        this.response = response;
        this.vertx = vertx;
        this.timer = vertx.setPeriodic(heartbeatMillis, id -> {
            if (System.nanoTime() - lastWrite >= heartbeatMillis * 1_000_000) {
                write(": keep-alive\n\n");
            }
        });
    }

    private synchronized void write(String event) {
        if (response.ended() || response.closed()) {
            return;
        }
        if (!response.headWritten()) {
            response.setStatusCode(200).setChunked(true)
                    .putHeader("Content-Type", "text/event-stream; charset=utf-8")
                    .putHeader("Cache-Control", "no-cache")
                    .putHeader("X-Accel-Buffering", "no");
        }
        response.write(event);
        lastWrite = System.nanoTime();
    }

    @Override
    public void chunk(ObjectNode chunk) {
        write("data: " + HttpResponses.write(chunk) + "\n\n");
    }

    @Override
    public void complete(ObjectNode ignored) {
        write("data: [DONE]\n\n");
        end();
    }

    @Override
    public synchronized void fail(ApiException error) {
        if (!response.headWritten()) {
            release();
            HttpResponses.error(response, error);
            return;
        }
        // mid-stream, as OpenAI does: an error event, then the stream ends
        write("data: " + HttpResponses.write(OpenAiShapes.error(error)) + "\n\n");
        end();
    }

    @Override
    public void release() {
        vertx.cancelTimer(timer);
    }

    synchronized void end() {
        release();
        if (!response.ended() && !response.closed()) {
            response.end();
        }
    }
}
