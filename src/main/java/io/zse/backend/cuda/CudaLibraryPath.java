package io.zse.backend.cuda;

import io.zse.backend.NativeLibraryLocation;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where libzse_cuda.so is looked for: the {@code zse.cuda.library} system property (or {@code ZSE_CUDA_LIBRARY}),
 * else next to the app ({@link NativeLibraryLocation}).
 */
public final class CudaLibraryPath {
    public static final String FILE_NAME = "libzse_cuda.so";
    public static final String PROPERTY = "zse.cuda.library";
    /** The CPU emulation of the library (src/main/native/cuda/emu): the kernels run on the CPU, no driver needed. */
    public static final String EMULATION_FILE_NAME = "libzse_cuda_emu.so";
    private static final NativeLibraryLocation LOCATION = new NativeLibraryLocation(FILE_NAME, PROPERTY, "ZSE_CUDA_LIBRARY");

    private CudaLibraryPath() {
    }

    /** The configured path, if the property or environment variable is set (it need not exist). */
    public static Optional<Path> configured() {
        return LOCATION.configured();
    }

    /** Places next to the app, most specific first. */
    public static List<Path> besideApp() {
        return LOCATION.besideApp();
    }

    /** Whether {@code path} is the CPU emulation (or its sanitizer build): it needs no NVIDIA driver. */
    public static boolean isEmulation(Path path) {
        Path name = path.getFileName();
        return name != null && name.toString().startsWith("libzse_cuda_emu");
    }

    /** The library to load: the configured path, else the first existing candidate beside the app. */
    public static Optional<Path> find() {
        return LOCATION.find();
    }
}
