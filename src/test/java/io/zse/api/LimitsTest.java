package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.notNullValue;

/** 429 with Retry-After and X-RateLimit-* once a key's requests per minute are spent; 503 when the queue is full. */
@QuarkusTest
@TestProfile(LimitsTest.Tight.class)
class LimitsTest extends ApiTestBase {
    /** Two requests a minute, and no queue at all (every generation finds it full). */
    public static final class Tight implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("zse.requests-per-minute", "2", "zse.max-queued", "0");
        }
    }

    @Test
    void fullQueueThenRateLimit() {
        for (int i = 0; i < 2; i++) {
            api().body(chat("Hi", "\"max_tokens\":2")).post("/v1/chat/completions").then().statusCode(503)
                    .header("Retry-After", notNullValue()).body("error.type", equalTo("server_error"))
                    .header("x-ratelimit-limit-requests", "2")
                    .header("x-ratelimit-remaining-requests", String.valueOf(1 - i));
        }
        api().body(chat("Hi", "\"max_tokens\":2")).post("/v1/chat/completions").then().statusCode(429)
                .header("Retry-After", notNullValue()).header("x-ratelimit-remaining-requests", "0")
                .header("x-ratelimit-reset-requests", notNullValue())
                .body("error.code", equalTo("rate_limit_exceeded")).body("error.type", equalTo("requests"));
        // reading the model list is not rate limited, and the other key has its own budget
        api().get("/v1/models").then().statusCode(200);
        io.restassured.RestAssured.given().header("Authorization", "Bearer second-key").contentType("application/json")
                .body(chat("Hi", "\"max_tokens\":2")).post("/v1/chat/completions").then().statusCode(503);
    }
}
