package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.List;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse serve} starts loading the model before Quarkus boots, reading the settings as Quarkus does: the server
 * takes that load over (one load, not two), serves it, and its meters reach the server's registry.
 */
@QuarkusTest
@TestProfile(EarlyLoads.SameSettings.class)
class EarlyModelLoadTest extends ApiTestBase {
    @Test
    void theServerServesTheModelLoadedBeforeItStarted() throws Exception {
        List<String> lines = Files.readAllLines(EarlyLoads.log("same"));
        assertTrue(lines.stream().anyMatch(l -> l.contains("model " + MODEL + " ready (")
                && l.contains("loaded while the server started")), "taken over: " + lines);
        List<String> engine = Files.readAllLines(EarlyLoads.engineLog("same"));
        assertEquals(1, engine.stream().filter(l -> l.contains("KV cache pool:")).count(), "one load: " + engine);

        api().body(chat("Once upon a time", "\"max_tokens\":4")).post("/v1/chat/completions").then().statusCode(200)
                .body("model", equalTo(MODEL)).body("usage.completion_tokens", equalTo(4));
        // registered before Quarkus's registry existed, exported through it
        RestAssured.given().get("/q/metrics").then().statusCode(200)
                .body(containsString("zse_kv_cache_blocks ")).body(containsString("zse_generated_tokens_total 4.0"));
    }
}
