package io.zse.api;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.zse.serve.BatchingEngine;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that hangs up mid-stream has its sequences cancelled, and their KV caches come back; one that leaves
 * /v1/embeddings stops its remaining inputs.
 */
@QuarkusTest
class DisconnectTest extends ApiTestBase {
    @Inject
    MeterRegistry registry;

    @Test
    void hangingUpCancelsTheSequencesAndFreesTheirKvCache() throws Exception {
        BatchingEngine engine = lifecycle.host().state().model().engine();
        double cancelledBefore = registry.counter("zse.cancelled.sequences").count();
        // 16 long, hot sequences: some are sure to be running when the client leaves
        String body = chat("Once upon a time", "\"max_tokens\":490,\"n\":16,\"temperature\":1.5,\"seed\":3,\"stream\":true");
        HttpClient client = HttpClient.newHttpClient();
        HttpResponse<java.io.InputStream> response = client.send(HttpRequest.newBuilder(
                        URI.create(baseUrl() + "/v1/chat/completions")).header("Authorization", "Bearer " + KEY)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String first = reader.readLine();
            assertTrue(first.startsWith("data: "), first);
        }
        client.close(); // closes the connection: the server sees the client go
        assertCancelledAndFreed(engine, cancelledBefore);
    }

    /** The same through the Funqy function, which answers only at the end: a client that leaves cancels it too. */
    @Test
    void hangingUpOnAFunctionCancelsItsSequences() throws Exception {
        BatchingEngine engine = lifecycle.host().state().model().engine();
        double cancelledBefore = registry.counter("zse.cancelled.sequences").count();
        String body = chat("Once upon a time", "\"max_tokens\":490,\"n\":16,\"temperature\":1.5,\"seed\":4");
        try (java.net.Socket socket = send(body, "/fn-chat-completions")) {
            long admitted = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (engine.kvBytesInUse() == 0 && System.nanoTime() < admitted) {
                Thread.sleep(1);
            }
        } // the client leaves while its 16 sequences run
        assertCancelledAndFreed(engine, cancelledBefore);
    }

    /**
     * A client that leaves /v1/embeddings stops its remaining inputs: of 480, the server embeds the few it started
     * before it saw the connection close (once, all 480 ran for no one).
     */
    @Test
    void hangingUpOnEmbeddingsStopsTheRemainingInputs() throws Exception {
        String input = "\"Once upon a time there was a little girl named Lily who liked to play in the park.\"";
        int tokensEach = RestAssured.given().header("Authorization", "Bearer " + KEY).contentType("application/json")
                .body("{\"model\":\"" + MODEL + "\",\"input\":[" + input + "]}").post("/v1/embeddings")
                .then().statusCode(200).extract().path("usage.prompt_tokens");
        String body = "{\"model\":\"" + MODEL + "\",\"input\":[" + String.join(",", Collections.nCopies(480, input))
                + "]}";
        double embedded = itemsPrefilledByALeavingClient("/v1/embeddings", body, tokensEach);
        assertTrue(embedded < 240, embedded + " of 480 inputs embedded after the client left");
    }

    /** The same for a completion's prompts scored before admission (echo with logprobs): 60 prompts, 64 KB. */
    @Test
    void hangingUpWhilePromptsAreScoredStopsTheScoring() throws Exception {
        String prompt = "\"" + "Once upon a time there was a little girl named Lily who liked to play in the park. "
                .repeat(10) + "\"";
        int tokensEach = RestAssured.given().header("Authorization", "Bearer " + KEY).contentType("application/json")
                .body(completion("", "\"max_tokens\":1").replace("\"prompt\":\"\"", "\"prompt\":" + prompt))
                .post("/v1/completions").then().statusCode(200).extract().path("usage.prompt_tokens");
        String body = "{\"model\":\"" + MODEL + "\",\"prompt\":[" + String.join(",", Collections.nCopies(60, prompt))
                + "],\"max_tokens\":1,\"echo\":true,\"logprobs\":1}";
        double scored = itemsPrefilledByALeavingClient("/v1/completions", body, tokensEach);
        assertTrue(scored < 30, scored + " of 60 prompts scored after the client left");
    }

    /**
     * Posts {@code body}, leaves once the server has prefilled its first item, waits for the request to end, and gives
     * how many items of {@code tokensEach} tokens were prefilled in all.
     */
    private double itemsPrefilledByALeavingClient(String path, String body, int tokensEach) throws Exception {
        Counter prefilled = registry.counter("zse.prompt.tokens");
        double before = prefilled.count();
        try (java.net.Socket socket = send(body, path)) {
            long started = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (prefilled.count() == before && System.nanoTime() < started) {
                Thread.sleep(1);
            }
            assertTrue(prefilled.count() > before, "the first item was prefilled");
        } // the client leaves
        // the engine is idle between two items too: the request has ended once the count holds for half a second
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        for (double last = -1; prefilled.count() != last && System.nanoTime() < deadline; ) {
            last = prefilled.count();
            Thread.sleep(500);
        }
        assertTrue(lifecycle.host().state().model().engine().awaitIdle(Duration.ofSeconds(30)));
        return (prefilled.count() - before) / tokensEach;
    }

    /** Sends a POST of {@code body} on a raw socket, which the caller closes to leave. */
    private static java.net.Socket send(String body, String path) throws java.io.IOException {
        URI uri = URI.create(baseUrl());
        java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort());
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        socket.getOutputStream().write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n"
                + "Authorization: Bearer " + KEY + "\r\nContent-Type: application/json\r\nContent-Length: "
                + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return socket;
    }

    /** Within 30 s some sequences were cancelled (the counter rose past its value before), and every KV cache is free. */
    private void assertCancelledAndFreed(BatchingEngine engine, double cancelledBefore) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while ((engine.kvBytesInUse() > 0 || registry.counter("zse.cancelled.sequences").count() == cancelledBefore)
                && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(registry.counter("zse.cancelled.sequences").count() > cancelledBefore, "sequences were cancelled");
        assertTrue(engine.awaitIdle(Duration.ofSeconds(10)));
        assertEquals(0, engine.kvBytesInUse(), "every KV cache is freed");
    }
}
