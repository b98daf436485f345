package io.zse.api;

import io.quarkus.runtime.configuration.ConfigUtils;
import org.jboss.logging.Logger;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The model's load as {@code zse serve} starts it: on its own thread before Quarkus boots, so that loading (and on a
 * GPU the device's start and the upload) overlaps Quarkus's start rather than following it. The settings are read from
 * the sources Quarkus reads (application.properties, env vars, system properties) with Quarkus's own config builder;
 * {@link ModelLifecycle} takes the load over when the server's settings turn out equal, and loads anew otherwise.
 */
public final class EarlyModelLoad {
    private static final Logger LOG = Logger.getLogger(EarlyModelLoad.class);
    private static final AtomicReference<EarlyModelLoad> PENDING = new AtomicReference<>();

    private final CompletableFuture<ModelSettings> settings = new CompletableFuture<>();
    private final CompletableFuture<ModelStartup.Loaded> loaded = new CompletableFuture<>();

    private EarlyModelLoad() {
    }

    /** Starts loading the model the configuration names; {@code zse serve} calls it before Quarkus boots. */
    public static void start() {
        begin(() -> ModelSettings.of(ConfigUtils.configBuilder().withMapping(ZseConfig.class).build()
                .getConfigMapping(ZseConfig.class)));
    }

    /** Starts loading with the given settings (tests: a load the server must take over, or one it must not). */
    static void start(ModelSettings settings) {
        begin(() -> settings);
    }

    private static void begin(Supplier<ModelSettings> read) {
        EarlyModelLoad load = new EarlyModelLoad();
        PENDING.set(load);
        Thread.ofPlatform().name("zse-model-loader").daemon().start(() -> load.run(read));
    }

    private void run(Supplier<ModelSettings> read) {
        ModelSettings wanted;
        try {
            wanted = read.get();
        } catch (RuntimeException e) {
            // Quarkus reads the same settings and reports what is wrong with them; the server then loads on its own
            LOG.debug("the settings could not be read before the server started", e);
            settings.complete(null);
            return;
        }
        settings.complete(wanted);
        try {
            loaded.complete(ModelStartup.load(wanted));
        } catch (Exception | Error e) {
            loaded.completeExceptionally(e);
        }
    }

    /**
     * The load started before the server, if there was one and it loads what {@code wanted} names. A load started with
     * other settings is dropped: its model is closed once it is loaded.
     */
    static Optional<EarlyModelLoad> claim(ModelSettings wanted) {
        EarlyModelLoad load = PENDING.getAndSet(null);
        if (load == null) {
            return Optional.empty();
        }
        ModelSettings had = load.settings.join();
        if (wanted.equals(had)) {
            return Optional.of(load);
        }
        if (had != null) {
            LOG.info("the model load started before the server used other settings: loading again");
            load.loaded.thenAccept(early -> {
                early.model().close();
                LOG.info("closed the model loaded with them");
            });
        }
        return Optional.empty();
    }

    /** Waits for the load; throws what the load threw. */
    ModelStartup.Loaded await() throws Exception {
        try {
            return loaded.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw (Error) e.getCause();
        }
    }
}
