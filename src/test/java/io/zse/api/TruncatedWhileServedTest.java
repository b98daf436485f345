package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.zse.TestModels;
import io.zse.format.TensorType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The served file is truncated in place while the server maps it (a copy written over it, say). Reading its lost
 * pages would raise SIGBUS: the next request finds the file shrunk before reading it and takes the model out of service
 * naming the file, so it and every later request get 503, readiness goes DOWN, and the platform can replace the
 * instance. (A request already running when the pages go fails with 503 too: {@code FailuresTest}.)
 */
@QuarkusTest
@TestProfile(TruncatedWhileServedTest.ServesACopy.class)
class TruncatedWhileServedTest {
    static final Path DIR = Path.of("target", "truncated-while-served-" + ProcessHandle.current().pid());
    static final Path MODEL = DIR.resolve("tinystories-q8.zse");
    static final Path LOG = DIR.resolve("server.log");

    static {
        // The profile and the test class each load this class (test and Quarkus class loaders): copy the file once.
        synchronized (System.getProperties()) {
            if (System.getProperty(MODEL.toString()) == null) {
                try {
                    Files.createDirectories(DIR);
                    Files.move(TestModels.convertTinyStories(TensorType.Q8, DIR), MODEL);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                System.setProperty(MODEL.toString(), "built");
            }
        }
    }

    public static final class ServesACopy implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // no background weight check: it would read the lost pages too
            return Map.of("zse.model-path", MODEL.toAbsolutePath().toString(), "zse.model-id", ApiTestBase.MODEL,
                    "zse.verify-weights", "off",
                    "quarkus.log.file.enabled", "true", "quarkus.log.file.path", LOG.toString());
        }
    }

    @Test
    void theNextRequestTakesTheModelOutOfServiceNamingTheFile() throws Exception {
        String prompt = ApiTestBase.completion("Once upon a time", "\"max_tokens\":4,\"temperature\":0");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (RestAssured.given().get("/q/health/ready").statusCode() != 200 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        ApiTestBase.api().body(prompt).post("/v1/completions").then().statusCode(200);
        RestAssured.given().get("/q/health/ready").then().statusCode(200);
        long size = Files.size(MODEL);

        try (FileChannel writer = FileChannel.open(MODEL, StandardOpenOption.WRITE)) {
            writer.truncate(size / 2);
        }
        String shrunk = "the file is now " + size / 2 + " bytes, " + size + " when it was mapped";
        // the request after the truncation looks at the file before it reads it: 503 naming the file, not a 500
        ApiTestBase.api().body(prompt).post("/v1/completions").then().statusCode(503)
                .header("Retry-After", equalTo("30"))
                .body("error.type", equalTo("server_error"))
                .body("error.message", containsString("taken out of service: " + MODEL.toAbsolutePath() + ": "
                        + shrunk));
        RestAssured.given().get("/q/health/ready").then().statusCode(503)
                .body("checks[0].status", equalTo("DOWN"))
                .body("checks[0].data.phase", equalTo("failed"))
                .body("checks[0].data.reason", containsString(MODEL.toAbsolutePath() + ": " + shrunk));
        RestAssured.given().get("/ping").then().statusCode(503);
        ApiTestBase.api().body(prompt).post("/v1/completions").then().statusCode(503)
                .body("error.message", containsString(shrunk));
        RestAssured.given().get("/q/health/live").then().statusCode(200);

        List<String> lines = Files.readAllLines(LOG);
        assertEquals(1, lines.stream().filter(l -> l.contains(" ERROR "))
                .filter(l -> l.contains("readiness is DOWN") && l.contains(shrunk)).count(), "one line: " + lines);
    }
}
