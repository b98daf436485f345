package io.zse.backend.cuda;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** zse_cuda.h, the Java binding table and the built library agree on every function and its signature. */
class CudaHeaderBindingTest {
    static final Path HEADER = Path.of("src/main/native/cuda/zse_cuda.h");
    static final Path BUILT = Path.of("target/native/libzse_cuda.so");
    private static final Pattern DECLARATION = Pattern.compile(
            "^(int|const char \\*)\\s*(zse_cuda_\\w+)\\(([^)]*)\\);", Pattern.MULTILINE);

    /** The header's declarations as FFM descriptors: pointers are addresses, the integer and float types by width. */
    static Map<String, FunctionDescriptor> headerFunctions() throws IOException {
        String header = Files.readString(HEADER).replaceAll("\\s*\\n\\s+", " "); // join continuation lines
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>();
        Matcher m = DECLARATION.matcher(header);
        while (m.find()) {
            List<MemoryLayout> parameters = new ArrayList<>();
            String list = m.group(3).strip();
            if (!list.equals("void")) {
                for (String p : list.split(",")) {
                    parameters.add(layoutOf(p.strip()));
                }
            }
            MemoryLayout result = m.group(1).equals("int") ? ValueLayout.JAVA_INT : ValueLayout.ADDRESS;
            functions.put(m.group(2), FunctionDescriptor.of(result, parameters.toArray(MemoryLayout[]::new)));
        }
        return functions;
    }

    private static MemoryLayout layoutOf(String parameter) {
        if (parameter.contains("*")) {
            return ValueLayout.ADDRESS;
        }
        String type = parameter.substring(0, parameter.lastIndexOf(' '));
        return switch (type) {
            case "int" -> ValueLayout.JAVA_INT;
            case "float" -> ValueLayout.JAVA_FLOAT;
            case "uint64_t", "int64_t" -> ValueLayout.JAVA_LONG;
            default -> throw new AssertionError("no FFM mapping for C type '" + type + "' in " + parameter);
        };
    }

    @Test
    void everyHeaderFunctionIsBoundWithItsSignature() throws IOException {
        Map<String, FunctionDescriptor> header = headerFunctions();
        assertTrue(header.size() > 40, "parsed only " + header.keySet());
        assertEquals(header.keySet(), CudaLibrary.FUNCTIONS.keySet());
        header.forEach((name, descriptor) -> assertEquals(descriptor, CudaLibrary.FUNCTIONS.get(name), name));
    }

    @Test
    void theHeaderAbiVersionIsTheBindingsOne() throws IOException {
        String header = Files.readString(HEADER);
        assertTrue(header.contains("#define ZSE_CUDA_ABI_VERSION " + CudaLibrary.ABI_VERSION));
        assertTrue(header.contains("#define ZSE_CUDA_INTEGER_ROWS " + QuantizedActivations.MAX_ROWS));
        assertTrue(header.contains("#define ZSE_CUDA_SPLIT_COUNTERS " + LaunchShapes.SPLIT_COUNTERS));
        assertTrue(header.contains("#define ZSE_CUDA_KV_INT8 " + DeviceKvPool.INT8_ROWS));
    }

    @Test
    void theBuiltLibraryExportsEveryHeaderFunction() throws IOException {
        assumeTrue(Files.isRegularFile(BUILT), "no " + BUILT + " (nvcc was not found at build time)");
        SymbolLookup lookup = SymbolLookup.libraryLookup(BUILT, Arena.ofAuto());
        for (String name : headerFunctions().keySet()) {
            assertTrue(lookup.find(name).isPresent(), BUILT + " lacks " + name);
        }
    }

    /** A backend's start binds every function in the background, so its first forward pass finds them bound. */
    @Test
    void backgroundBindingBindsEveryFunction() throws InterruptedException {
        assumeTrue(TestCudaLibrary.probe().usable(), TestCudaLibrary::skipReason);
        CudaLibrary library = TestCudaLibrary.probe().library().orElseThrow();
        library.bindAllInBackground();
        library.bindAllInBackground(); // once per library: the second call starts nothing
        assertEquals(CudaLibrary.FUNCTIONS.size(), library.boundAfterBackgroundBinding());
    }
}
