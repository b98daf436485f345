package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What clients do wrong is not logged as our error; our own failures are, with an incident id. */
@QuarkusTest
class ClientFaultLoggingTest extends ApiTestBase {
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void capture() {
        Logger.getLogger("").addHandler(capture);
    }

    @AfterEach
    void release() {
        Logger.getLogger("").removeHandler(capture);
    }

    @Test
    void aClientThatHangsUpMidBodyIsNoError() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            raw.send("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":");
            Thread.sleep(200);
        }
        Thread.sleep(500); // the server sees the close
        assertNoErrors();
    }

    @Test
    void badJsonToAFunctionIsNoError() {
        api().body("{\"model\": tinystories").post("/fn-chat-completions").then().statusCode(400)
                .body("error.code", equalTo("invalid_json"));
        api().body("{\"model\":\"x\"}xyz").post("/fn-completions").then().statusCode(400)
                .body("error.code", equalTo("invalid_json"));
        assertNoErrors();
    }

    /** Funqy took every method: GET got a 400 about JSON and a stack trace, DELETE a 405 logged as an error. */
    @Test
    void aWrongMethodOnAFunctionIsA405AndNoError() {
        for (String path : List.of("/fn-chat-completions", "/fn-completions")) {
            for (String method : List.of("GET", "DELETE", "PUT", "PATCH", "HEAD")) {
                api().request(method, path).then().statusCode(405);
            }
        }
        assertNoErrors();
    }

    @Test
    void aBadChunkSizeIsNoError() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            raw.send("POST /fn-chat-completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n");
            raw.readUntilClosed(5000);
        }
        assertNoErrors();
    }

    @Test
    void aBugIsAnErrorWithAnIncidentId() {
        String message = api().get("/v1/test-failure").then().statusCode(500)
                .body("error.message", containsString("incident")).extract().path("error.message");
        String incident = message.replaceAll(".*incident (\\w+).*", "$1");
        List<LogRecord> errors = records.stream().filter(r -> r.getLevel().intValue() >= Level.SEVERE.intValue()).toList();
        assertEquals(1, errors.size(), "one error: " + errors);
        assertTrue(((ExtLogRecord) errors.get(0)).getFormattedMessage().contains(incident), "the log names the incident");
        assertTrue(errors.get(0).getThrown() != null, "with its stack trace");
    }

    private void assertNoErrors() {
        List<LogRecord> bad = records.stream().filter(r -> r.getLevel().intValue() >= Level.SEVERE.intValue()
                || r.getThrown() != null).toList();
        assertTrue(bad.isEmpty(), "no errors or stack traces: " + bad.stream().map(r -> r.getLoggerName() + ": "
                + r.getMessage() + " " + r.getThrown()).toList());
    }
}
