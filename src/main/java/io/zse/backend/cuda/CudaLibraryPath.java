package io.zse.backend.cuda;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where libzse_cuda.so is looked for: the {@code zse.cuda.library} system property (or {@code ZSE_CUDA_LIBRARY}),
 * else next to the app: {@code lib/native/} of the packaged app (target/quarkus-app), or {@code target/native/} when
 * running from the build's classes.
 */
public final class CudaLibraryPath {
    public static final String FILE_NAME = "libzse_cuda.so";
    public static final String PROPERTY = "zse.cuda.library";
    /** The CPU emulation of the library (src/main/native/cuda/emu): the kernels run on the CPU, no driver needed. */
    public static final String EMULATION_FILE_NAME = "libzse_cuda_emu.so";

    private CudaLibraryPath() {
    }

    /** The configured path, if the property or environment variable is set (it need not exist). */
    public static Optional<Path> configured() {
        String value = System.getProperty(PROPERTY, System.getenv("ZSE_CUDA_LIBRARY"));
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
    }

    /** Places next to the app, most specific first. */
    public static List<Path> besideApp() {
        List<Path> candidates = new ArrayList<>();
        Path code = codeLocation();
        if (code != null) {
            // quarkus-app/app/zse.jar -> quarkus-app/lib/native; target/classes -> target/native
            Path dir = Files.isDirectory(code) ? code : code.getParent();
            if (dir != null && dir.getParent() != null) {
                candidates.add(dir.getParent().resolve("lib/native").resolve(FILE_NAME));
                candidates.add(dir.getParent().resolve("native").resolve(FILE_NAME));
            }
        }
        return candidates;
    }

    /** Whether {@code path} is the CPU emulation (or its sanitizer build): it needs no NVIDIA driver. */
    public static boolean isEmulation(Path path) {
        Path name = path.getFileName();
        return name != null && name.toString().startsWith("libzse_cuda_emu");
    }

    /** The library to load: the configured path, else the first existing candidate beside the app. */
    public static Optional<Path> find() {
        Optional<Path> configured = configured();
        if (configured.isPresent()) {
            return configured;
        }
        return besideApp().stream().filter(Files::isRegularFile).findFirst();
    }

    private static Path codeLocation() {
        try {
            var source = CudaLibraryPath.class.getProtectionDomain().getCodeSource();
            return source == null ? null : Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }
}
