package io.zse.api;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.zse.serve.LoadedModel;
import io.zse.serve.ModelHost;
import io.zse.serve.WeightVerifier;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;
import sun.misc.Signal;

import java.util.Optional;

/**
 * Brings the model up on a background thread at Quarkus's start (taking over the load {@code zse serve} started before
 * Quarkus, when it loads what the settings name), and drains it at shutdown.
 */
@ApplicationScoped
public class ModelLifecycle {
    private static final Logger LOG = Logger.getLogger(ModelLifecycle.class);

    @Inject
    ZseConfig config;

    @Inject
    MeterRegistry registry;

    private final ModelHost host = new ModelHost();

    public ModelHost host() {
        return host;
    }

    /** The host's state once the served file has been looked at: the health checks' view. */
    ModelHost.State checkedState() {
        host.failIfFileShrunk().ifPresent(reason -> LOG.errorf("readiness is DOWN: %s", reason));
        return host.state();
    }

    void onStart(@Observes StartupEvent event) {
        Thread.ofPlatform().name("zse-model-loader").daemon().start(this::load);
        if (LaunchMode.current() != LaunchMode.TEST) {
            installTermHandler();
        }
    }

    private void load() {
        try {
            ModelSettings settings = ModelSettings.of(config);
            Optional<EarlyModelLoad> early = EarlyModelLoad.claim(settings);
            ModelStartup.Loaded loaded = early.isPresent() ? early.get().await() : ModelStartup.load(settings);
            loaded.meters().add(registry);
            LoadedModel model = loaded.model();
            if (!host.ready(model, loaded.millis())) {
                LOG.infof("model %s loaded after shutdown began: not serving it", model.id());
                if (host.state().model() != model) { // shutdown has passed: no one else will close it
                    model.close();
                }
                return;
            }
            Gauge.builder("zse.model.load.seconds", () -> loaded.millis() / 1000.0)
                    .description("Time the model took to load").register(registry);
            LOG.infof("model %s ready (%s, %d ms%s)", model.id(), loaded.path(), loaded.millis(),
                    early.isPresent() ? ", loaded while the server started" : "");
            if (settings.verification() == ZseConfig.WeightVerification.BACKGROUND) {
                model.weights().startInBackground(this::weightsChecked);
            }
        } catch (Exception | Error e) {
            String reason = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
            host.failed(reason);
            LOG.errorf("the model failed to load: %s", reason);
            LOG.debug("model load failure", e);
        }
    }

    /** The background check's verdict: corrupt weights take the model out of service (readiness DOWN, /ping 503). */
    private void weightsChecked(WeightVerifier.Status status) {
        switch (status) {
            case WeightVerifier.Failed failed -> {
                host.failed(failed.message());
                LOG.errorf("readiness is DOWN: %s", failed.message());
            }
            case WeightVerifier.Ok ok -> LOG.infof("weights verified: %.1f MB in %d ms", ok.bytes() / 1e6, ok.millis());
            default -> {
            }
        }
    }

    /**
     * SIGTERM: readiness goes DOWN and new requests get 503 at once, while HTTP keeps running so requests in flight
     * get the grace period to finish; what still runs after it is cancelled (its stream gets an error event). Then
     * Quarkus shuts down as usual. Quarkus's own SIGTERM handling closes HTTP without waiting for our streams, hence
     * the handler. Not installed under tests, which share the JVM with the test runner.
     */
    private void installTermHandler() {
        Signal.handle(new Signal("TERM"), signal -> Thread.ofPlatform().name("zse-drain").start(() -> {
            drain();
            Quarkus.asyncExit(0);
        }));
    }

    void drain() {
        ModelHost.State state = host.drain();
        LOG.infof("shutting down: no new requests; in-flight ones get %s", config.shutdownGrace());
        if (state.model() == null) {
            return;
        }
        try {
            if (!state.model().engine().awaitIdle(config.shutdownGrace())) {
                LOG.warnf("shutdown: cancelling requests still running after the %s grace period", config.shutdownGrace());
                state.model().engine().close();
                Thread.sleep(100); // lets the error events reach the clients before HTTP closes
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void onStop(@Observes ShutdownEvent event) {
        ModelHost.State state = host.stop();
        if (state.model() != null) {
            state.model().close();
        }
    }
}
