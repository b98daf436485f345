package io.zse.api;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A client that hangs up mid-stream has its sequences cancelled, and their KV caches come back. */
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
        URI uri = URI.create(baseUrl());
        try (java.net.Socket socket = new java.net.Socket(uri.getHost(), uri.getPort())) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            socket.getOutputStream().write(("POST /fn-chat-completions HTTP/1.1\r\nHost: localhost\r\n"
                    + "Authorization: Bearer " + KEY + "\r\nContent-Type: application/json\r\nContent-Length: "
                    + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            long admitted = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (engine.kvBytesInUse() == 0 && System.nanoTime() < admitted) {
                Thread.sleep(1);
            }
        } // the client leaves while its 16 sequences run
        assertCancelledAndFreed(engine, cancelledBefore);
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
