package io.zse.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.zse.backend.cpu.NativeCpuLibrary;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.zse.deploy.DeployFiles.ROOT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native executable can make every FFM downcall into libzse_cuda and libzse_cpu: GraalVM generates a stub per function
 * descriptor at build time, listed in reachability-metadata.json; a call whose descriptor is missing fails at run time.
 * The descriptors are derived here from the C ABI header, the library's single definition.
 */
class NativeImageMetadataTest {
    private static final Path METADATA = ROOT.resolve("src/main/resources/META-INF/native-image/io.zse/zse");
    private static final Path CUDA_HEADER = ROOT.resolve("src/main/native/cuda/zse_cuda.h");
    private static final Path CPU_HEADER = ROOT.resolve("src/main/native/cpu/zse_cpu.h");
    private static final Pattern FUNCTION = Pattern.compile(
            "^\\s*((?:const\\s+)?\\w+\\s*\\*?)\\s*(zse_\\w+)\\s*\\(([^)]*)\\)\\s*;", Pattern.MULTILINE);
    /** Canonical layouts of the FFM linker that a downcall descriptor may use (JNI names: fixed size everywhere). */
    private static final Set<String> CANONICAL = Set.of("void", "void*", "jint", "jlong", "jfloat", "jdouble");

    @Test
    void downcallsUseCanonicalTypesOnce() throws IOException {
        List<String> seen = new ArrayList<>();
        for (JsonNode downcall : downcalls()) {
            String signature = signature(downcall);
            assertTrue(CANONICAL.containsAll(List.of(signature.replace(" critical", "").split("[(),]+"))), signature);
            seen.add(signature);
        }
        assertEquals(seen.size(), new HashSet<>(seen).size(), "duplicate descriptors: " + seen);
        assertTrue(!seen.isEmpty());
    }

    @Test
    void everyFunctionOfTheCudaLibraryHasItsDowncallRegistered() throws IOException {
        assumeTrue(Files.exists(CUDA_HEADER), "the CUDA library (issue 6) is not merged into this build yet");
        assertEquals(Set.of(), missingDowncalls(CUDA_HEADER, function -> false),
                "downcalls missing from reachability-metadata.json");
    }

    /** The CPU kernels are critical downcalls on heap arrays: their registration must say so. */
    @Test
    void everyFunctionOfTheCpuLibraryHasItsDowncallRegistered() throws IOException {
        assertEquals(Set.of(), missingDowncalls(CPU_HEADER, NativeCpuLibrary.KERNELS::containsKey),
                "downcalls missing from reachability-metadata.json");
        assertEquals(NativeCpuLibrary.KERNELS.size() + NativeCpuLibrary.QUERIES.size(),
                FUNCTION.matcher(Files.readString(CPU_HEADER).replaceAll("(?s)/\\*.*?\\*/", "")).results().count(), "the binding covers the header");
    }

    /** The functions of a C header whose descriptor is not registered ({@code critical}: those bound as critical). */
    private static Set<String> missingDowncalls(Path header, Predicate<String> critical) throws IOException {
        Set<String> registered = new HashSet<>();
        for (JsonNode downcall : downcalls()) {
            registered.add(signature(downcall));
        }
        String text = Files.readString(header).replaceAll("(?s)/\\*.*?\\*/", "");
        Set<String> missing = new TreeSet<>();
        int functions = 0;
        for (Matcher function = FUNCTION.matcher(text); function.find(); functions++) {
            List<String> parameters = new ArrayList<>();
            String list = function.group(3).strip();
            if (!list.isEmpty() && !list.equals("void")) {
                for (String parameter : list.split(",")) {
                    parameters.add(layout(parameter.contains("*") ? "*" : parameter.strip().replaceAll("\\s+\\w+$", "")));
                }
            }
            String signature = layout(function.group(1)) + "(" + String.join(",", parameters) + ")"
                    + (critical.test(function.group(2)) ? " critical" : "");
            if (!registered.contains(signature)) {
                missing.add(function.group(2) + " " + signature);
            }
        }
        assertTrue(functions > 0, "no functions found in " + header);
        return missing;
    }

    @Test
    void nativeImageOptionsAllowNativeAccessAndStartBackendsAtRunTime() throws IOException {
        String options = Files.readString(METADATA.resolve("native-image.properties"));
        assertTrue(options.contains("--enable-native-access=ALL-UNNAMED"), options);
        assertTrue(options.contains("--add-modules=jdk.incubator.vector"), options);
        Matcher runTime = Pattern.compile("--initialize-at-run-time=([\\w.,]+)").matcher(options);
        assertTrue(runTime.find(), options);
        for (String pkg : runTime.group(1).split(",")) {
            assertTrue(Files.isDirectory(DeployFiles.SOURCES.resolve(pkg.replace('.', '/'))), "no package " + pkg);
        }
    }

    /** The C type of a parameter or result as the FFM layout the Java binding uses for it. */
    private static String layout(String cType) {
        String type = cType.replace("const", "").strip();
        if (type.contains("*")) {
            return "void*";
        }
        return switch (type) {
            case "int", "int32_t" -> "jint";
            case "int64_t", "uint64_t" -> "jlong";
            case "float" -> "jfloat";
            case "double" -> "jdouble";
            case "void" -> "void";
            default -> throw new AssertionError("no FFM layout for C type " + cType + "; extend the mapping");
        };
    }

    private static JsonNode downcalls() throws IOException {
        return new ObjectMapper().readTree(METADATA.resolve("reachability-metadata.json").toFile())
                .path("foreign").path("downcalls");
    }

    private static String signature(JsonNode downcall) {
        List<String> parameters = new ArrayList<>();
        downcall.path("parameterTypes").forEach(p -> parameters.add(p.asText()));
        boolean critical = downcall.path("options").path("critical").path("allowHeapAccess").asBoolean(false);
        return downcall.path("returnType").asText() + "(" + String.join(",", parameters) + ")"
                + (critical ? " critical" : "");
    }
}
