package io.zse.api;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.zse.serve.ModelHost;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * RunPod's load-balancer probe: 204 while the model loads, 200 once ready, 503 after a failed load or during shutdown.
 * Served at the health path on the HTTP port and, when PORT_HEALTH names another port, on that port too.
 */
@ApplicationScoped
public class HealthProbe {
    private static final Logger LOG = Logger.getLogger(HealthProbe.class);

    @Inject
    ZseConfig config;

    @Inject
    ModelLifecycle lifecycle;

    @ConfigProperty(name = "quarkus.http.port")
    int httpPort;

    private Vertx probeVertx;

    void routes(@Observes Router router) {
        router.get(config.healthPath()).method(HttpMethod.HEAD).handler(ctx -> answer(ctx.request()));
    }

    /**
     * The health port runs on a Vert.x of its own with a single thread: on Quarkus's, Micrometer's HTTP binder meters a
     * second port with a server_port tag the main port's meters lack, Prometheus refuses them, and the listen (and
     * with it the start-up or the shutdown) never completes.
     */
    void secondPort(@Observes StartupEvent event) {
        int port = config.healthPort();
        if (port <= 0 || port == httpPort) {
            return;
        }
        probeVertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1));
        probeVertx.createHttpServer().requestHandler(request -> {
            if (request.path().equals(config.healthPath())) {
                answer(request);
            } else {
                request.response().setStatusCode(404).end();
            }
        }).listen(port).onSuccess(s -> LOG.infof("health probe on port %d at %s", port, config.healthPath()))
                .onFailure(e -> LOG.errorf("cannot open the health port %d: %s", port, e.getMessage()));
    }

    void closeSecondPort(@Observes ShutdownEvent event) {
        if (probeVertx != null) {
            probeVertx.close();
        }
    }

    private void answer(HttpServerRequest request) {
        ModelHost.Phase phase = lifecycle.checkedState().phase();
        int status = switch (phase) {
            case LOADING -> 204;
            case READY -> 200;
            case FAILED, DRAINING, STOPPED -> 503;
        };
        request.response().setStatusCode(status).end();
    }
}
