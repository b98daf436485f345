package io.zse.api;

import io.zse.serve.ModelHost;
import io.zse.serve.WeightVerifier;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;
import org.eclipse.microprofile.health.Startup;

/**
 * Health as platforms probe it: started and ready are DOWN until the model has loaded (ready also while draining
 * or after a failed load or weight check, or once the served file has shrunk, with the reason); liveness stays UP
 * while the process can answer.
 */
@ApplicationScoped
public class ModelHealthChecks {
    @Inject
    ModelLifecycle lifecycle;

    @Produces
    @Startup
    HealthCheck started() {
        // its own name and only the phase: /q/health lists every check, and the details are the readiness check's
        return () -> {
            ModelHost.Phase phase = lifecycle.host().state().phase();
            return HealthCheckResponse.named("model-loaded").status(phase != ModelHost.Phase.LOADING)
                    .withData("phase", phase.name().toLowerCase()).build();
        };
    }

    @Produces
    @Readiness
    HealthCheck ready() {
        return () -> model(lifecycle.checkedState());
    }

    @Produces
    @Liveness
    HealthCheck alive() {
        return () -> HealthCheckResponse.up("process");
    }

    private HealthCheckResponse model(ModelHost.State state) {
        HealthCheckResponseBuilder b = HealthCheckResponse.named("model").status(state.phase() == ModelHost.Phase.READY)
                .withData("phase", state.phase().name().toLowerCase());
        if (state.model() != null) {
            b.withData("id", state.model().id()).withData("load_ms", state.loadMillis());
            WeightVerifier.Status weights = state.model().weights().status();
            b.withData("weights", weights.summary());
            if (weights instanceof WeightVerifier.Failed failed && failed.tensor() != null) {
                b.withData("corrupt_tensor", failed.tensor());
            }
        }
        if (state.failure() != null) {
            b.withData("reason", state.failure());
        }
        return b.build();
    }
}
