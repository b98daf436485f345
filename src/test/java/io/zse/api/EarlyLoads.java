package io.zse.api;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.zse.serve.BatchingEngine;
import io.zse.serve.EngineLimits;
import io.zse.serve.ModelLoader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Test profiles that start a model load before the server boots, as {@code zse serve} does: one reads the settings
 * the way the launcher does (the server must take it over), one loads another model (the server must load its own
 * and close that one). Each logs to its own file.
 */
final class EarlyLoads {
    private EarlyLoads() {
    }

    static Path log(String name) {
        return Path.of("target", "early-load-" + name + "-" + ProcessHandle.current().pid() + ".log");
    }

    /**
     * The engine's own log lines (each load logs its KV pool) from before the server's log file is open, when an early
     * load logs them, to the end of the run.
     */
    static Path engineLog(String name) {
        return Path.of("target", "early-load-" + name + "-engine-" + ProcessHandle.current().pid() + ".log");
    }

    /** A profile whose run logs to {@link #log}(name) and starts {@code resource} before the server boots. */
    private abstract static class StartsEarly implements QuarkusTestProfile {
        private final String name;
        private final Class<? extends QuarkusTestResourceLifecycleManager> resource;

        StartsEarly(String name, Class<? extends QuarkusTestResourceLifecycleManager> resource) {
            this.name = name;
            this.resource = resource;
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.log.file.enabled", "true", "quarkus.log.file.path", log(name).toString());
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(resource));
        }
    }

    /** The launcher's early load: the settings read from the configuration before Quarkus boots. */
    public static final class SameSettings extends StartsEarly {
        public SameSettings() {
            super("same", StartsFromConfig.class);
        }
    }

    /** An early load of the demo model under another name, with other limits: not what the server wants. */
    public static final class OtherSettings extends StartsEarly {
        public OtherSettings() {
            super("other", StartsOtherModel.class);
        }
    }

    public static final class StartsFromConfig implements QuarkusTestResourceLifecycleManager {
        private final Logger engine = Logger.getLogger(BatchingEngine.class.getName());
        private final Handler toFile = new Handler() {
            @Override
            public synchronized void publish(LogRecord record) {
                try {
                    Files.writeString(engineLog("same"), record.getMessage() + "\n", StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };

        @Override
        public Map<String, String> start() {
            // The early load's lines come before Quarkus opens the log file (or after: a race), so they are kept here.
            engine.addHandler(toFile);
            EarlyModelLoad.start();
            return Map.of();
        }

        @Override
        public void stop() {
            engine.removeHandler(toFile);
        }
    }

    public static final class StartsOtherModel implements QuarkusTestResourceLifecycleManager {
        static final String ID = "early-other";

        @Override
        public Map<String, String> start() {
            EarlyModelLoad.start(new ModelSettings(Optional.empty(), Path.of("target/zse-cache"),
                    new ModelLoader.Options(ID, "cpu", "f32", 1, new EngineLimits(4, 4, 256, 64), "64MiB", false),
                    ZseConfig.WeightVerification.OFF));
            return Map.of();
        }

        @Override
        public void stop() {
        }
    }
}
