package io.zse.api;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import io.zse.serve.ModelHost;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Shared set-up of the API tests: one Quarkus app (the default test profile), the demo model loaded. */
abstract class ApiTestBase {
    static final String MODEL = "tinystories-656k";
    static final String KEY = "test-key";

    @Inject
    ModelLifecycle lifecycle;

    @BeforeEach
    void waitForModel() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (lifecycle.host().state().phase() == ModelHost.Phase.LOADING && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(ModelHost.Phase.READY, lifecycle.host().state().phase(), "model: " + lifecycle.host().state().failure());
    }

    static RequestSpecification api() {
        return RestAssured.given().header("Authorization", "Bearer " + KEY).contentType(ContentType.JSON);
    }

    static String chat(String content, String extra) {
        return "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]"
                + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    static String completion(String prompt, String extra) {
        return "{\"model\":\"" + MODEL + "\",\"prompt\":\"" + prompt + "\"" + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    static String baseUrl() {
        return "http://localhost:" + RestAssured.port;
    }
}
