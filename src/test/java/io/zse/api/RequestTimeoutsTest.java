package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Half-sent requests and idle connections are closed (or answered 408) in time; a long SSE stream is never cut. */
@QuarkusTest
@TestProfile(RequestTimeoutsTest.Short.class)
class RequestTimeoutsTest extends ApiTestBase {
    private static final int TIMEOUT_MS = 700;
    /** Time for the server to act once a timeout has passed (a loaded 2-core machine included). */
    private static final int SLACK_MS = 4000;

    public static final class Short implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String t = TIMEOUT_MS + "ms";
            return Map.of("zse.request-header-timeout", t, "zse.request-body-timeout", t, "zse.idle-timeout", t);
        }
    }

    @Test
    void unfinishedHeadersAreClosed() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            long start = System.nanoTime();
            raw.send("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: app");
            raw.readUntilClosed(TIMEOUT_MS + SLACK_MS);
            assertTrue((System.nanoTime() - start) / 1_000_000 >= TIMEOUT_MS - 50, "not before the timeout");
        }
    }

    @Test
    void unfinishedBodyGets408AndIsClosed() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            long start = System.nanoTime();
            String answer = raw.send("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":")
                    .readUntilClosed(TIMEOUT_MS + SLACK_MS);
            assertTrue((System.nanoTime() - start) / 1_000_000 >= TIMEOUT_MS - 50, "not before the timeout");
            assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
            assertTrue(answer.contains("\"code\":\"request_timeout\""), answer);
        }
    }

    @Test
    void idleKeptAliveConnectionIsClosed() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            raw.send("GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY + "\r\n\r\n");
            String answer = raw.readUntilClosed(TIMEOUT_MS + SLACK_MS);
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
        }
    }

    @Test
    void aStreamLongerThanEveryTimeoutIsNotCut() {
        long start = System.nanoTime();
        String body = api().body(chat("Once upon a time", "\"max_tokens\":400,\"n\":16,\"temperature\":1.5,\"seed\":1,"
                + "\"stream\":true")).post("/v1/chat/completions").then().statusCode(200).extract().asString();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(body.endsWith("data: [DONE]\n\n"), "the stream ended normally after " + millis + " ms");
        assertTrue(millis > TIMEOUT_MS, "the stream outlived the timeouts (" + millis + " ms)");
        // and a non-streamed one that takes as long
        api().body(chat("Once upon a time", "\"max_tokens\":400,\"n\":16,\"temperature\":1.5,\"seed\":1"))
                .post("/v1/chat/completions").then().statusCode(200);
        assertEquals(200, api().get("/v1/models").statusCode());
    }
}
