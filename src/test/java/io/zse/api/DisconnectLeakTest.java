package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.zse.serve.BatchingEngine;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Streams whose clients hang up after the first chunk leave nothing behind: no stream (whose heartbeat timer would keep
 * it, its response and its run alive), no run, no engine sequence, no KV cache.
 */
@QuarkusTest
class DisconnectLeakTest extends ApiTestBase {
    private static final int STREAMS = 12;

    @Test
    void hungUpStreamsAreUnreachableAfterAFullGc() throws Exception {
        BatchingEngine engine = lifecycle.host().state().model().engine();
        // earlier tests' requests may still be reachable from their clients' open keep-alive connections (one each,
        // until the connection closes or serves its next request): only growth counts
        long streamsBefore = LiveHeap.instances("io.zse.api.SseStream");
        long runsBefore = LiveHeap.instances("io.zse.api.CompletionRun");
        long sequencesBefore = LiveHeap.instances("io.zse.serve.BatchingEngine$Sequence");
        String body = chat("Once upon a time",
                "\"max_tokens\":400,\"n\":4,\"temperature\":1.5,\"seed\":7,\"logprobs\":true,\"top_logprobs\":5,\"stream\":true");
        for (int i = 0; i < STREAMS; i++) {
            try (HttpClient client = HttpClient.newHttpClient()) {
                HttpResponse<java.io.InputStream> response = client.send(HttpRequest.newBuilder(
                                URI.create(baseUrl() + "/v1/chat/completions")).header("Authorization", "Bearer " + KEY)
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
                assertTrue(reader.readLine().startsWith("data: "));
                reader.close();
            } // closing the client closes its connection: the server sees the client go
        }
        assertTrue(engine.awaitIdle(Duration.ofSeconds(30)), "every cancelled sequence left the engine");
        assertEquals(0, engine.kvBytesInUse());
        // a few heartbeat periods (200 ms in tests): a timer left registered would have fired and kept its stream
        Thread.sleep(600);
        assertTrue(LiveHeap.instances("io.zse.api.SseStream") <= streamsBefore, "live SseStream objects");
        assertTrue(LiveHeap.instances("io.zse.api.CompletionRun") <= runsBefore, "live CompletionRun objects");
        assertTrue(LiveHeap.instances("io.zse.serve.BatchingEngine$Sequence") <= sequencesBefore,
                "live engine sequences");
    }
}
