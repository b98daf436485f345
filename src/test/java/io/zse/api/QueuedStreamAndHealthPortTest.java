package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.zse.serve.BatchingEngine;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two things that need their own settings, so they share one Quarkus restart: a stream queued behind a busy batch gets
 * SSE heartbeat comments until its first token, and PORT_HEALTH / HEALTH_CHECK_PATH move the RunPod probe.
 */
@QuarkusTest
@TestProfile(QueuedStreamAndHealthPortTest.OneSlotAndProbePort.class)
class QueuedStreamAndHealthPortTest extends ApiTestBase {
    /**
     * One running sequence at a time, 16 queued at most, a 10 ms heartbeat, and the probe at /healthz on a second,
     * free port.
     */
    public static final class OneSlotAndProbePort implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // the env var names a deployment sets; application.properties maps them onto zse.health-*
            return Map.of("zse.max-running", "1", "zse.max-queued", "16", "zse.sse-heartbeat", "10ms",
                    "PORT_HEALTH", String.valueOf(freePort()), "HEALTH_CHECK_PATH", "/healthz");
        }

        private static int freePort() {
            try (ServerSocket socket = new ServerSocket(0)) {
                return socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Inject
    ZseConfig config;

    @Test
    void queuedStreamsGetHeartbeatCommentsUntilTheirFirstToken() throws Exception {
        BatchingEngine engine = lifecycle.host().state().model().engine();
        try (HttpClient client = HttpClient.newHttpClient()) {
            // eight long, hot sequences take the only slot one after another; the streams below queue behind them
            CompletableFuture<HttpResponse<String>> blocker = client.sendAsync(post("/v1/completions",
                    completion("Once upon a time", "\"max_tokens\":490,\"n\":8,\"temperature\":1.5,\"seed\":3")),
                    HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (engine.runningSequences() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(1, engine.runningSequences(), "the blocker holds the one slot");
            CompletableFuture<HttpResponse<String>> text = client.sendAsync(post("/v1/completions",
                    completion("Tom had a", "\"max_tokens\":3,\"stream\":true")), HttpResponse.BodyHandlers.ofString());
            CompletableFuture<HttpResponse<String>> chat = client.sendAsync(post("/v1/chat/completions",
                    chat("Tom had a", "\"max_tokens\":3,\"stream\":true")), HttpResponse.BodyHandlers.ofString());

            // completions send nothing before the first token: the stream opens with comments
            String textBody = text.get(60, TimeUnit.SECONDS).body();
            List<String> textEvents = List.of(textBody.split("\n\n"));
            assertTrue(textEvents.getFirst().startsWith(": "), "a heartbeat comes first: " + head(textBody));
            int firstData = firstDataEvent(textEvents);
            assertTrue(textEvents.subList(0, firstData).stream().allMatch(e -> e.equals(": keep-alive")), head(textBody));
            assertTrue(SseEvents.parse(textBody).getLast().contains("\"finish_reason\":\"length\""), textBody);

            // chat sends the role as its first data event without waiting for the slot, then heartbeats while it
            // waits, then the content (a heartbeat may precede the role when the role chunk's write is scheduled late)
            String chatBody = chat.get(60, TimeUnit.SECONDS).body();
            List<String> chatEvents = List.of(chatBody.split("\n\n"));
            int role = firstDataEvent(chatEvents);
            assertTrue(chatEvents.subList(0, role).stream().allMatch(e -> e.equals(": keep-alive")), head(chatBody));
            assertTrue(chatEvents.get(role).contains("\"role\":\"assistant\""), head(chatBody));
            assertTrue(chatEvents.get(role + 1).startsWith(": "), "a heartbeat follows the role: " + head(chatBody));
            assertTrue(SseEvents.parse(chatBody).getLast().contains("\"finish_reason\":\"length\""), chatBody);

            assertEquals(200, blocker.get(60, TimeUnit.SECONDS).statusCode());
        }
    }

    /**
     * A stream whose prompts are scored first (echo with logprobs) has had its head written by a heartbeat when its
     * 18th choice finds the queue full (one choice may run, 16 wait): it gets the refusal as an error event and ends,
     * and the choices admitted before it leave the engine. (Once, such a stream was never ended and its client hung.)
     */
    @Test
    void aStreamRefusedAfterItsHeadWasWrittenEndsWithAnErrorEvent() throws Exception {
        BatchingEngine engine = lifecycle.host().state().model().engine();
        // long enough that scoring 18 of them outlasts the heartbeat on any machine
        String prompt = "\"" + "Once upon a time there was a little girl named Lily who liked to play in the park with"
                + " her dog and her friends every day after school. ".repeat(4) + "\"";
        String prompts = String.join(",", Collections.nCopies(18, prompt));
        String body = "{\"model\":\"" + MODEL + "\",\"prompt\":[" + prompts + "],\"max_tokens\":5,\"stream\":true,"
                + "\"echo\":true,\"logprobs\":1}";
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<String> response = client.sendAsync(post("/v1/completions", body),
                    HttpResponse.BodyHandlers.ofString()).get(60, TimeUnit.SECONDS);
            assertEquals(200, response.statusCode(), "the heartbeat wrote the head while the prompts were scored");
            List<String> events = List.of(response.body().split("\n\n"));
            assertEquals(": keep-alive", events.getFirst(), head(response.body()));
            String last = events.getLast(); // an error event ends the stream, as OpenAI's do: no [DONE] follows
            assertTrue(response.body().endsWith("\n\n") && last.startsWith("data: {\"error\"")
                    && last.contains("queue is full"), last);
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (engine.queuedSequences() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(0, engine.queuedSequences(), "the admitted choices were cancelled");
        assertTrue(engine.awaitIdle(Duration.ofSeconds(30)));
    }

    @Test
    void theHealthPathAnswersOnTheHealthPortAndTheHttpPort() throws Exception {
        int healthPort = config.healthPort();
        assertNotEquals(0, healthPort);
        assertNotEquals(RestAssured.port, healthPort);
        assertEquals("/healthz", config.healthPath());
        RestAssured.given().get("/healthz").then().statusCode(200);
        // the probe path moved, so /ping is just an unknown path now
        RestAssured.given().get("/ping").then().statusCode(404).body("error.code", equalTo("unknown_url"));

        // the second listener opens at start-up without holding it up: give it a moment
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                RestAssured.given().port(healthPort).get("/healthz").then().statusCode(200);
                break;
            } catch (Exception e) {
                if (!(rootCause(e) instanceof ConnectException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
        // it serves the probe and nothing else
        RestAssured.given().port(healthPort).get("/ping").then().statusCode(404);
        RestAssured.given().port(healthPort).header("Authorization", "Bearer " + KEY).get("/v1/models")
                .then().statusCode(404);
        // the second listener leaves the main port's HTTP metrics alone
        RestAssured.given().get("/q/metrics").then().statusCode(200);
    }

    private static HttpRequest post(String path, String body) {
        return HttpRequest.newBuilder(URI.create(baseUrl() + path)).header("Authorization", "Bearer " + KEY)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static int firstDataEvent(List<String> events) {
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).startsWith("data: ")) {
                return i;
            }
        }
        throw new AssertionError("no data event: " + events);
    }

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String head(String body) {
        return body.length() < 400 ? body : body.substring(0, 400);
    }
}
