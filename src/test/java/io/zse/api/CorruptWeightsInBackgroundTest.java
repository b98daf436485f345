package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.zse.serve.ModelHost;
import io.zse.serve.WeightVerifier;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** A tensor flipped on disk is found after ready: readiness DOWN naming it, /ping 503, one ERROR line, requests 503. */
@QuarkusTest
@TestProfile(CorruptWeights.CheckedInBackground.class)
class CorruptWeightsInBackgroundTest {
    @Inject
    ModelLifecycle lifecycle;

    @Test
    void theCheckTakesTheModelOutOfServiceAndNamesTheTensor() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (lifecycle.host().state().phase() != ModelHost.Phase.FAILED && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        ModelHost.State state = lifecycle.host().state();
        assertEquals(ModelHost.Phase.FAILED, state.phase(), "phase");
        assertNotNull(state.model(), "the loaded model stays for shutdown to close");
        WeightVerifier.Failed failed = assertInstanceOf(WeightVerifier.Failed.class, state.model().weights().status());
        assertEquals(CorruptWeights.TENSOR, failed.tensor());

        RestAssured.given().get("/q/health/ready").then().statusCode(503)
                .body("checks[0].status", equalTo("DOWN"))
                .body("checks[0].data.weights", equalTo("corrupt"))
                .body("checks[0].data.corrupt_tensor", equalTo(CorruptWeights.TENSOR))
                .body("checks[0].data.reason", containsString("tensor " + CorruptWeights.TENSOR + ": data checksum mismatch"));
        RestAssured.given().get("/ping").then().statusCode(503);
        RestAssured.given().header("Authorization", "Bearer " + ApiTestBase.KEY).contentType("application/json")
                .body(ApiTestBase.completion("Once upon a time", "\"max_tokens\":2")).post("/v1/completions")
                .then().statusCode(503).body("error.message", containsString(CorruptWeights.TENSOR));

        long errors = Files.readAllLines(CorruptWeights.log("background")).stream()
                .filter(line -> line.contains(" ERROR ") && line.contains(CorruptWeights.TENSOR)).count();
        assertEquals(1, errors, "one ERROR line names the tensor");
    }
}
