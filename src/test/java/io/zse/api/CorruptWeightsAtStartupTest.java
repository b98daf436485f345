package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.zse.serve.ModelHost;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** zse.verify-weights=startup: a flipped tensor fails the load, naming the tensor, before the model is ever ready. */
@QuarkusTest
@TestProfile(CorruptWeights.CheckedAtStartup.class)
class CorruptWeightsAtStartupTest {
    @Inject
    ModelLifecycle lifecycle;

    @Test
    void theLoadFailsNamingTheTensor() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (lifecycle.host().state().phase() == ModelHost.Phase.LOADING && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        ModelHost.State state = lifecycle.host().state();
        assertEquals(ModelHost.Phase.FAILED, state.phase(), "phase");
        assertNull(state.model(), "the model was closed, never served");
        assertTrue(state.failure().contains("tensor " + CorruptWeights.TENSOR + ": data checksum mismatch"),
                state.failure());

        RestAssured.given().get("/q/health/ready").then().statusCode(503)
                .body("checks[0].data.phase", equalTo("failed"))
                .body("checks[0].data.reason", containsString(CorruptWeights.TENSOR));
        RestAssured.given().get("/ping").then().statusCode(503);
    }
}
