package io.zse.api;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A strict parser of the SSE wire format OpenAI sends: every event is {@code data: <payload>\n\n} (with the space),
 * comment lines start with ':', nothing else appears, and the stream ends with {@code data: [DONE]\n\n}.
 */
final class SseEvents {
    private SseEvents() {
    }

    /** The data payloads in order, [DONE] excluded; fails on any deviation from the format. */
    static List<String> parse(String body) {
        assertTrue(body.endsWith("data: [DONE]\n\n"), "the stream ends with data: [DONE]: " + tail(body));
        List<String> payloads = new ArrayList<>();
        String[] events = body.split("\n\n", -1);
        assertEquals("", events[events.length - 1], "the stream ends with a blank line");
        for (int i = 0; i < events.length - 1; i++) {
            String event = events[i];
            for (String line : event.split("\n")) {
                if (line.startsWith(":")) {
                    continue; // a heartbeat comment
                }
                if (!line.startsWith("data: ")) {
                    fail("not an SSE data line (\"data: \" with the space): " + line);
                }
                String payload = line.substring(6);
                if (!payload.equals("[DONE]")) {
                    payloads.add(payload);
                } else {
                    assertEquals(events.length - 2, i, "[DONE] is the last event");
                }
            }
        }
        return payloads;
    }

    private static String tail(String body) {
        return body.length() < 200 ? body : body.substring(body.length() - 200);
    }
}
