package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.TestModels;
import io.zse.backend.cpu.NativeCpuLibrary;
import io.zse.format.TensorType;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code zse generate} in a child JVM where the Vector API kernels cannot run, with {@code zse.cpu.kernels=auto}: without
 * the native library it must pick the scalar kernels, with it the native ones (whose single-row reads and attention
 * then run on the scalar kernels); either way say so in one line, load no class that uses {@code jdk.incubator.vector},
 * and still give transformers' greedy story. The child is this JDK with the test class path and none of the build's
 * JVM flags.
 */
class CpuKernelFallbackTest {
    /** The vector kernels: never loaded on the scalar path. */
    private static final Pattern VECTOR_KERNEL =
            Pattern.compile("io\\.zse\\.backend\\.cpu\\.((?!Scalar)\\w*Matmul|Vector\\w+|TileProduct)\\b");
    /** The Vector API, and the one class that asks it for the vector width. */
    private static final Pattern VECTOR_API =
            Pattern.compile("jdk\\.incubator\\.vector\\.|io\\.zse\\.backend\\.cpu\\.PreferredFloatVector\\b");
    private static final int TOKENS = 24;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "no incubator module | -Dzse.cpu.library=/none/libzse_cpu.so"
                    + " | scalar (native kernels unusable: | the jdk.incubator.vector module is not loaded | false",
            "native image | --add-modules jdk.incubator.vector -Dorg.graalvm.nativeimage.imagecode=runtime"
                    + " -Dzse.cpu.library=/none/libzse_cpu.so | scalar (native kernels unusable: | this is a native image"
                    + " | false",
            // Only here is the Vector API asked for its width (the module is there and this is no native image).
            "128-bit vectors | --add-modules jdk.incubator.vector -XX:MaxVectorSize=16 -Dzse.cpu.library=/none/x.so"
                    + " | scalar (native kernels unusable: | the preferred float vector is 128 bits | true",
            // A native image's case: the native kernels run, beside the scalar ones for what they leave to Java.
            "native kernels, no incubator module | | native | libzse_cpu.so | false",
    })
    void autoFallsBackFromTheVectorKernelsAndKeepsTheGreedyStory(String environment, String jvmFlags, String choice,
                                                                  String reason, boolean asksVectorWidth)
            throws IOException, InterruptedException {
        assumeTrue(!choice.equals("native") || NativeCpuLibrary.LOCATION.find().isPresent(),
                "no libzse_cpu in this build (no C compiler)");
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/tinystories-656k-greedy-f32.json")) {
            golden = new ObjectMapper().readTree(in).get("cases").get(0);
        }
        Path zse = TestModels.convertTinyStories(TensorType.F32, dir);
        Path classLog = dir.resolve("classes.log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xlog:class+load=info:file=" + classLog,
                "-Dzse.cpu.kernels=auto", "-cp", System.getProperty("java.class.path")));
        if (jvmFlags != null) {
            command.addAll(Arrays.asList(jvmFlags.split(" ")));
        }
        command.addAll(List.of(ZseMain.class.getName(), "generate", "--model", zse.toString(),
                "--prompt", golden.get("prompt").asText(), "--max-tokens", String.valueOf(TOKENS),
                "--temperature", "0", "--json", "--backend", "cpu", "--threads", "1"));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("out.json").toFile())
                .redirectError(dir.resolve("err.txt").toFile());
        builder.environment().keySet().removeAll(List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "ZSE_CPU_KERNELS"));
        Process child = builder.start();
        if (!child.waitFor(180, TimeUnit.SECONDS)) {
            child.destroyForcibly();
            throw new AssertionError("zse generate did not finish in 180 s: " + command);
        }
        String err = Files.readString(dir.resolve("err.txt"));
        assertEquals(0, child.exitValue(), err);

        List<String> lines = err.lines().filter(l -> l.startsWith("zse: CPU kernels: ")).toList();
        assertEquals(1, lines.size(), err);
        assertTrue(lines.getFirst().startsWith("zse: CPU kernels: " + choice), lines.getFirst());
        assertTrue(lines.getFirst().contains(reason), lines.getFirst());
        JsonNode result = new ObjectMapper().readTree(dir.resolve("out.json").toFile());
        for (int i = 0; i < TOKENS; i++) {
            assertEquals(golden.get("greedy_ids").get(i), result.get("ids").get(i), environment + ", token " + i);
        }
        List<String> classes = Files.readAllLines(classLog);
        assertEquals(List.of(), classes.stream().filter(l -> VECTOR_KERNEL.matcher(l).find()).toList(),
                "vector kernels loaded on the scalar path");
        if (!asksVectorWidth) {
            assertEquals(List.of(), classes.stream().filter(l -> VECTOR_API.matcher(l).find()).toList(),
                    "Vector API touched although the module is absent or this is a native image");
        }
    }
}
