package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The GPU run (tools/gpu/device.sh) names its test classes one by one, and GPUs are lent rarely: every test class that
 * opens the CUDA library under test ({@link TestCudaLibrary}) must be in that list, or a run on a real GPU leaves it
 * out (two classes were, for two sessions).
 */
class DeviceRunCoverageTest {
    private static final Path TESTS = Path.of("src/test/java");
    private static final Path DEVICE_RUN = Path.of("tools/gpu/device.sh");

    @Test
    void theGpuRunListsEveryTestClassOfTheCudaLibrary() throws IOException {
        Set<String> named = Set.copyOf(Arrays.asList(Files.readString(DEVICE_RUN).split("[\\s()]+")));
        List<String> classes = cudaTestClasses();
        assertTrue(classes.size() >= 10, "found only " + classes);
        List<String> missing = classes.stream().filter(c -> !named.contains(c)).toList();
        assertEquals(List.of(), missing, "test classes of the CUDA library that " + DEVICE_RUN + " does not run");
    }

    /**
     * Fully qualified names of the test classes (but this one) whose source opens the library under test, themselves
     * or through {@link CudaTestBackends}.
     */
    private static List<String> cudaTestClasses() throws IOException {
        try (Stream<Path> files = Files.walk(TESTS)) {
            return files.filter(f -> f.getFileName().toString().endsWith("Test.java"))
                    .filter(f -> !f.getFileName().toString().startsWith(DeviceRunCoverageTest.class.getSimpleName()))
                    .filter(DeviceRunCoverageTest::opensTheLibrary)
                    .map(f -> TESTS.relativize(f).toString().replace('/', '.').replaceAll("\\.java$", ""))
                    .sorted().toList();
        }
    }

    private static boolean opensTheLibrary(Path source) {
        try {
            String text = Files.readString(source);
            return text.contains("TestCudaLibrary.probe()") || text.contains("CudaTestBackends.");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
