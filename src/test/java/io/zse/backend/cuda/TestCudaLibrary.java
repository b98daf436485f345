package io.zse.backend.cuda;

import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The libzse_cuda the CUDA tests run on: {@code -Dzse.cuda.test.library=PATH} when given (a GPU machine passes
 * target/native/libzse_cuda.so; the AddressSanitizer run, libzse_cuda_emu_asan.so), else the CPU emulation the build
 * made with g++ (target/native/libzse_cuda_emu.so), so the kernels run in every build.
 */
public final class TestCudaLibrary {
    static final String PROPERTY = "zse.cuda.test.library";
    static final Path EMULATION = Path.of("target/native", CudaLibraryPath.EMULATION_FILE_NAME);

    private static CudaProbe probe;

    private TestCudaLibrary() {
    }

    public static Path path() {
        String configured = System.getProperty(PROPERTY);
        return configured == null || configured.isBlank() ? EMULATION : Path.of(configured);
    }

    /** The probe of {@link #path()}, made once per test JVM (the library stays loaded anyway). */
    public static synchronized CudaProbe probe() {
        if (probe == null) {
            probe = CudaProbe.run(path());
        }
        return probe;
    }

    /** Why the CUDA tests are skipped here, for assumptions. */
    public static String skipReason() {
        return "no usable CUDA library at " + path() + ": " + probe().reason().orElse("")
                + " (the emulation needs g++ at build time)";
    }

    /** length values uniform in [-2, 2), the same for the same seed: the kernels' test inputs. */
    public static float[] random(int length, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] a = new float[length];
        for (int i = 0; i < length; i++) {
            a[i] = (float) r.nextDouble(-2, 2);
        }
        return a;
    }
}
