package io.zse.api;

import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/** A route with a bug, for tests that need the server's own failure: GET /v1/test-failure always throws. */
@ApplicationScoped
public class FailingRoute {
    void routes(@Observes Router router) {
        router.get("/v1/test-failure").handler(ctx -> {
            throw new IllegalStateException("a bug, on purpose");
        });
    }
}
