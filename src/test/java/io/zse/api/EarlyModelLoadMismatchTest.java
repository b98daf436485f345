package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A load started before the server with settings other than the server's is not served: the server loads the model
 * its own settings name, and the other one is closed once loaded.
 */
@QuarkusTest
@TestProfile(EarlyLoads.OtherSettings.class)
class EarlyModelLoadMismatchTest extends ApiTestBase {
    @Test
    void theServerLoadsItsOwnModelAndClosesTheOther() throws Exception {
        api().get("/v1/models").then().statusCode(200).body("data.size()", equalTo(1))
                .body("data[0].id", equalTo(MODEL));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        List<String> lines = Files.readAllLines(EarlyLoads.log("other"));
        while (lines.stream().noneMatch(l -> l.contains("closed the model loaded with them"))
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
            lines = Files.readAllLines(EarlyLoads.log("other"));
        }
        assertTrue(lines.stream().anyMatch(l -> l.contains("model " + MODEL + " ready (")
                && !l.contains("while the server")), "the server's own load: " + lines);
        assertTrue(lines.stream().anyMatch(l -> l.contains("closed the model loaded with them")), "closed: " + lines);
    }
}
