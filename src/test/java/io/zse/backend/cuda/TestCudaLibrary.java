package io.zse.backend.cuda;

import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseTensor;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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

    /**
     * Sets (or, with a null value, removes) a variable of the process's native environment, which the emulation reads
     * at each call (System.getenv keeps the JVM's start-up copy): how a test emulates a smaller device for a while.
     */
    static void setNativeEnvironment(String name, String value) {
        Linker linker = Linker.nativeLinker();
        try (Arena arena = Arena.ofConfined()) {
            int status;
            if (value == null) {
                MethodHandle unsetenv = linker.downcallHandle(linker.defaultLookup().find("unsetenv").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
                status = (int) unsetenv.invokeExact(arena.allocateFrom(name));
            } else {
                MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().find("setenv").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_INT));
                status = (int) setenv.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 1);
            }
            if (status != 0) {
                throw new IllegalStateException("setting " + name + " in the native environment failed");
            }
        } catch (Throwable e) {
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        }
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

    /**
     * A random weight [rows, cols]: random bytes, where every F16 (the scales; F16 data) is made finite, about 1e-3
     * (an F16 whose high byte is 0x10-0x13 or 0x90-0x93).
     */
    public static ZseTensor randomWeight(TensorType type, int group, int rows, int cols, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        TensorInfo info = TensorInfo.planned("model.layers.0.mlp.up_proj.weight", type, new long[]{rows, cols}, group);
        byte[] data = new byte[(int) info.dataLength()];
        random.nextBytes(data);
        if (type == TensorType.F16) {
            finiteHalves(data);
        }
        byte[] scales = new byte[(int) info.scalesLength()];
        random.nextBytes(scales);
        finiteHalves(scales);
        return new ZseTensor(info, MemorySegment.ofArray(data), MemorySegment.ofArray(scales));
    }

    private static void finiteHalves(byte[] bytes) {
        for (int at = 1; at < bytes.length; at += 2) {
            bytes[at] = (byte) (0x10 | (bytes[at] & 0x83));
        }
    }
}
