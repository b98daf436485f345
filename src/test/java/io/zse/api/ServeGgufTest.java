package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.zse.convert.gguf.GgufFixtures;
import io.zse.serve.ModelHost;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse serve --model x.gguf}: the server converts the GGUF into zse.cache-dir once (progress in the log), then
 * serves it under the file's name, with the tokenizer and chat-free completion taken from the GGUF.
 */
@QuarkusTest
@TestProfile(ServeGgufTest.GgufModel.class)
class ServeGgufTest {
    static final Path DIR = Path.of("target", "serve-gguf-" + ProcessHandle.current().pid());
    static final Path LOG = DIR.resolve("server.log");

    public static final class GgufModel implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                Files.createDirectories(DIR);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Path gguf = GgufFixtures.gguf("tinystories-656k-q8_0", DIR);
            return Map.of("zse.model-path", gguf.toAbsolutePath().toString(),
                    "zse.cache-dir", DIR.resolve("cache").toAbsolutePath().toString(),
                    "quarkus.log.file.enabled", "true", "quarkus.log.file.path", LOG.toString());
        }
    }

    @Inject
    ModelLifecycle lifecycle;

    @Test
    void theGgufIsConvertedOnceAndServed() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (lifecycle.host().state().phase() == ModelHost.Phase.LOADING && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(ModelHost.Phase.READY, lifecycle.host().state().phase(), lifecycle.host().state().failure());
        RestAssured.given().get("/q/health/started").then().statusCode(200);
        String text = RestAssured.given().header("Authorization", "Bearer test-key").contentType(ContentType.JSON)
                .body("{\"model\":\"tinystories-656k-q8_0\",\"prompt\":\"Once upon a time\",\"max_tokens\":8,"
                        + "\"temperature\":0}")
                .post("/v1/completions").then().statusCode(200)
                .body("model", equalTo("tinystories-656k-q8_0"))
                .extract().path("choices[0].text");
        assertTrue(text.startsWith(", a little girl named Lily"), text);
        try (Stream<Path> cached = Files.list(DIR.resolve("cache"))) {
            List<Path> files = cached.toList();
            assertEquals(1, files.size(), files.toString());
            assertTrue(files.getFirst().getFileName().toString().matches("tinystories-656k-q8_0-[0-9a-f]{16}\\.zse"));
        }
        List<String> log = Files.readAllLines(LOG);
        assertTrue(log.stream().anyMatch(l -> l.contains("convert: converting ")), "conversion announced");
        assertTrue(log.stream().anyMatch(l -> l.contains("converting the model: 100 %")), "progress logged");
        assertTrue(log.stream().anyMatch(l -> l.contains("Q8_0 -> Q8 (exact)")), "conversion summary logged");
    }
}
