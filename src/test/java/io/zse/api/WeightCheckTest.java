package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.zse.serve.WeightVerifier;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** By default a clean model's weights are checked in the background after ready, and the health payload says ok. */
@QuarkusTest
class WeightCheckTest extends ApiTestBase {
    @Test
    void aCleanModelIsCheckedInTheBackgroundAndStaysReady() throws InterruptedException {
        WeightVerifier verifier = lifecycle.host().state().model().weights();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!(verifier.status() instanceof WeightVerifier.Ok) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertInstanceOf(WeightVerifier.Ok.class, verifier.status());
        RestAssured.given().get("/q/health/ready").then().statusCode(200)
                .body("checks[0].data.weights", equalTo("ok"))
                .body("checks[0].data.corrupt_tensor", nullValue());
        RestAssured.given().get("/ping").then().statusCode(200);
    }
}
