package io.zse.api;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.zse.serve.EngineLimits;
import io.zse.serve.ModelLoader;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
        @Override
        public Map<String, String> start() {
            EarlyModelLoad.start();
            return Map.of();
        }

        @Override
        public void stop() {
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
