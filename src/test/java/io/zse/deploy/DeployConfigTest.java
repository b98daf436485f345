package io.zse.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static io.zse.deploy.DeployFiles.ROOT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Ports, environment variables and paths in the deployment files are the ones the application really uses. */
class DeployConfigTest {
    private static final Path JVM_DOCKERFILE = ROOT.resolve("Dockerfile");
    private static final Path NATIVE_DOCKERFILE = ROOT.resolve("Dockerfile.native");
    private static final Path MODAL_APP = ROOT.resolve("deploy/modal/app.py");
    private static final Path RUNPOD_ENV = ROOT.resolve("deploy/runpod/.env.example");
    /** Read by the NVIDIA container toolkit or the C library, not by the app. */
    private static final Set<String> PLATFORM_VARIABLES = Set.of("NVIDIA_DRIVER_CAPABILITIES", "LANG");

    @Test
    void everyPlatformUsesThePortTheServerListensOn() {
        String port = String.valueOf(DeployFiles.defaultHttpPort());
        for (Path dockerfile : List.of(JVM_DOCKERFILE, NATIVE_DOCKERFILE)) {
            assertEquals(List.of(port), DeployFiles.dockerfileArguments(dockerfile, "EXPOSE"), dockerfile + " EXPOSE");
            assertEquals(port, DeployFiles.dockerfileEnv(dockerfile).get("PORT"), dockerfile + " ENV PORT");
        }
        assertEquals(port, container().at("/ports/0/containerPort").asText(), "Knative containerPort");
        assertEquals(Integer.parseInt(port), DeployFiles.pythonConstant(MODAL_APP, "PORT"), "Modal PORT");
        Map<String, String> runpod = DeployFiles.envFile(RUNPOD_ENV);
        assertEquals(port, runpod.get("PORT"), "RunPod PORT");
        assertEquals(port, runpod.get("PORT_HEALTH"), "RunPod PORT_HEALTH (/ping is served on the HTTP port)");
    }

    @Test
    void everyVariableSetForTheServerIsOneTheAppReads() {
        Set<String> set = new TreeSet<>();
        set.addAll(DeployFiles.dockerfileEnv(JVM_DOCKERFILE).keySet());
        set.addAll(DeployFiles.dockerfileEnv(NATIVE_DOCKERFILE).keySet());
        set.addAll(DeployFiles.envFile(RUNPOD_ENV).keySet());
        set.addAll(DeployFiles.modalImageEnv(MODAL_APP).keySet());
        container().path("env").forEach(variable -> set.add(variable.path("name").asText()));
        set.removeAll(PLATFORM_VARIABLES);

        Set<String> read = DeployFiles.variablesTheAppReads();
        List<String> unread = set.stream().filter(name -> !read.contains(name)).toList();
        // The server (issue 5) and the CUDA backend (issue 6) define most ZSE_* settings; until they are merged this
        // check can only list what is still missing.
        assumeTrue(unread.isEmpty() || DeployFiles.serverPresent(),
                "not yet read by this build (server not merged): " + unread);
        assertEquals(List.of(), unread, "environment variables the deployment files set but the app never reads");
    }

    @Test
    void modelPathsLieOnTheMountedVolumes() {
        assertTrue(DeployFiles.modalImageEnv(MODAL_APP).get("ZSE_MODEL_PATH").startsWith("f\"{MODELS_DIR}/"),
                "Modal: ZSE_MODEL_PATH under the Volume mounted at MODELS_DIR");
        String mount = container().at("/volumeMounts/0/mountPath").asText();
        assertTrue(knativeEnv("ZSE_MODEL_PATH").startsWith(mount + "/"), "Knative: ZSE_MODEL_PATH under " + mount);
        assertTrue(DeployFiles.envFile(RUNPOD_ENV).get("ZSE_MODEL_PATH").startsWith("/runpod-volume/"),
                "RunPod: ZSE_MODEL_PATH on the network volume");
    }

    @Test
    void theJvmImageUsesTheAotCacheItTrains() {
        String cache = DeployFiles.dockerfileEnv(JVM_DOCKERFILE).get("ZSE_AOT_CACHE");
        assertTrue(DeployFiles.dockerfileArguments(JVM_DOCKERFILE, "RUN").contains(cache),
                "the training RUN writes " + cache);
        assertTrue(DeployFiles.read(ROOT.resolve("deploy/docker/entrypoint.sh")).contains("-XX:AOTCache=$ZSE_AOT_CACHE"));
    }

    /**
     * A checkout's ./zse serve trains its server cache with the image's training script and passes it; the script's
     * own server (run through the same launcher) neither takes one nor trains one, and the packaging puts every class
     * on the JVM's class path, where the cache can hold it.
     */
    @Test
    void theLauncherTrainsAndUsesTheServersAotCache() {
        String launcher = DeployFiles.read(ROOT.resolve("zse"));
        assertTrue(launcher.contains("deploy/docker/train-aot-cache.sh\" \"$serve_cache.$$\"")
                && launcher.contains("mv -f \"$serve_cache.$$\" \"$serve_cache\"")
                && launcher.contains("flags+=(-XX:AOTCache=\"$serve_cache\")"),
                "./zse serve trains and passes its cache");
        assertTrue(launcher.contains("[ -z \"${ZSE_AOT_TRAINING:-}\" ]"), "no cache inside a training run");
        assertTrue(DeployFiles.read(ROOT.resolve("deploy/docker/train-aot-cache.sh"))
                .contains("export ZSE_AOT_TRAINING=1"), "the training script marks its server");
        assertTrue(DeployFiles.read(DeployFiles.PROPERTIES).contains("\nquarkus.package.jar.type=aot-jar\n"));
    }

    @Test
    void probedPathsAreServed() {
        assumeTrue(DeployFiles.serverPresent(), "the HTTP server (issue 5) is not merged into this build yet");
        List<String> paths = new ArrayList<>();
        paths.add(container().at("/readinessProbe/httpGet/path").asText());
        paths.add(container().at("/livenessProbe/httpGet/path").asText());
        for (String path : paths) {
            assertTrue(path.startsWith("/q/health/"), path);
        }
        assertTrue(DeployFiles.read(ROOT.resolve("pom.xml")).contains("<artifactId>quarkus-smallrye-health</artifactId>"),
                "the /q/health/* probes need quarkus-smallrye-health");
        assertTrue(DeployFiles.read(ROOT.resolve("deploy/modal/app.py")).contains("/q/health/ready"));
        assertTrue(sourcesMention("\"/ping\""), "RunPod polls /ping: some resource must serve it");
    }

    private static boolean sourcesMention(String text) {
        try (var files = java.nio.file.Files.walk(DeployFiles.SOURCES)) {
            return files.filter(f -> f.toString().endsWith(".java")).anyMatch(f -> DeployFiles.read(f).contains(text));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static JsonNode container() {
        return KnativeManifest.read().at("/spec/template/spec/containers/0");
    }

    private static String knativeEnv(String name) {
        for (JsonNode variable : container().path("env")) {
            if (variable.path("name").asText().equals(name)) {
                return variable.path("value").asText();
            }
        }
        throw new AssertionError("the Knative container sets no " + name);
    }
}
