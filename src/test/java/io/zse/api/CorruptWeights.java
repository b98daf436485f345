package io.zse.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import io.zse.TestModels;
import io.zse.format.TensorType;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * A served TinyStories file with one byte flipped inside a tensor's data: it opens (metadata checksums hold), so
 * only the weight check can notice. The profiles serve it with the check in the background or at start-up, and log
 * to a file the tests read.
 */
final class CorruptWeights {
    static final Path DIR = Path.of("target", "corrupt-weights-" + ProcessHandle.current().pid());
    static final Path MODEL = DIR.resolve("tinystories-q8.zse");
    static final String TENSOR = "model.layers.1.mlp.up_proj.weight";

    static {
        // The profile and the test class each load this class (test and Quarkus class loaders): build the file once.
        synchronized (System.getProperties()) {
            if (System.getProperty(MODEL.toString()) == null) {
                try {
                    Files.createDirectories(DIR);
                    Path converted = TestModels.convertTinyStories(TensorType.Q8, DIR);
                    TestModels.flipByteInTensor(converted, TENSOR);
                    Files.move(converted, MODEL, StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                System.setProperty(MODEL.toString(), "built");
            }
        }
    }

    /** The server log of a profile's run. */
    static Path log(String verification) {
        return DIR.resolve(verification + ".log");
    }

    private CorruptWeights() {
    }

    private static Map<String, String> serve(String verification) {
        return Map.of("zse.model-path", MODEL.toAbsolutePath().toString(), "zse.verify-weights", verification,
                "quarkus.log.file.enabled", "true", "quarkus.log.file.path", log(verification).toString());
    }

    public static final class CheckedInBackground implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return serve("background");
        }
    }

    public static final class CheckedAtStartup implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return serve("startup");
        }
    }
}
