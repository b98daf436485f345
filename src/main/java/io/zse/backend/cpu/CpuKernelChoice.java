package io.zse.backend.cpu;

import io.zse.backend.BackendUnavailableException;

import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Which CPU kernels run: {@code native} (our SIMD library, {@link NativeKernels}), {@code vector} (Vector API),
 * {@code scalar} (plain Java, runs anywhere) or {@code auto}, from the system property {@code zse.cpu.kernels}, else
 * the environment variable {@code ZSE_CPU_KERNELS}, else auto. {@code auto} takes the native kernels where the library
 * was built and has a SIMD kernel set for this CPU, else the vector kernels where they run with SIMD, else the scalar
 * ones, and logs one line naming its choice and why. An explicit choice that cannot run is a
 * {@link BackendUnavailableException} naming the reason. The native kernels leave attention and single-row reads to
 * the Java kernels auto would pick.
 * <p>
 * The vector kernels need: not a native image for {@code auto} (GraalVM CE/Mandrel run the Vector API as plain Java
 * there, far slower than the scalar kernels), the {@code jdk.incubator.vector} module in the boot layer
 * ({@code --add-modules}), and a preferred float vector of 256 or 512 bits, the widths {@link Matmul}'s species and
 * group loops are built for (a 128-bit NEON or {@code -XX:MaxVectorSize=16} JVM gets the scalar kernels). Each check
 * runs only when the previous one passed, so no Vector API class is loaded before the module is known to be there.
 */
public enum CpuKernelChoice {
    AUTO, NATIVE, VECTOR, SCALAR;

    /** The system property (and, upper-cased with _ for ., the environment variable) that sets the choice. */
    public static final String PROPERTY = "zse.cpu.kernels";
    /** Forces one of the native library's kernel sets (avx512-vnni, avx2, neon-dotprod, generic) instead of the best one. */
    public static final String ISA_PROPERTY = "zse.cpu.isa";

    private static final String MODULE = "jdk.incubator.vector";

    private static CpuKernels selected;

    /** Parses auto, native, vector or scalar (case-insensitive). */
    public static CpuKernelChoice parse(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "auto" -> AUTO;
            case "native" -> NATIVE;
            case "vector" -> VECTOR;
            case "scalar" -> SCALAR;
            default -> throw new IllegalArgumentException(
                    "unknown CPU kernels '" + text + "' (expected auto, native, vector or scalar)");
        };
    }

    /** {@code zse.cpu.kernels}, else {@code ZSE_CPU_KERNELS}, else auto. */
    public static CpuKernelChoice resolve() {
        return Optional.ofNullable(System.getProperty(PROPERTY))
                .or(() -> Optional.ofNullable(System.getenv("ZSE_CPU_KERNELS")))
                .map(CpuKernelChoice::parse)
                .orElse(AUTO);
    }

    /**
     * The kernels of this process: the {@link #resolve() configured} choice, made on first use and kept; auto's choice
     * is reported as one line on stderr. A failed explicit choice is not kept (it throws again).
     */
    public static synchronized CpuKernels selected() {
        if (selected == null) {
            selected = resolve().kernels(line -> System.err.println(line));
        }
        return selected;
    }

    /** The kernels this choice gives in this process; {@code log} receives auto's line. */
    public CpuKernels kernels(Consumer<String> log) {
        if (this == SCALAR) {
            return ScalarKernels.INSTANCE;
        }
        Optional<String> vectorUnavailable = vectorUnavailable(
                System.getProperty("org.graalvm.nativeimage.imagecode") != null,
                ModuleLayer.boot().findModule(MODULE).isPresent(), () -> PreferredFloatVector.bits());
        if (this == VECTOR) {
            return kernels(vectorUnavailable, log);
        }
        return kernels(NativeLibraryProbe.result(), vectorUnavailable, log);
    }

    /** Vector or scalar, given why the vector kernels cannot run (empty: they can). */
    CpuKernels kernels(Optional<String> vectorUnavailable, Consumer<String> log) {
        if (this == SCALAR) {
            return ScalarKernels.INSTANCE;
        }
        if (this == VECTOR && vectorUnavailable.isPresent()) {
            throw new BackendUnavailableException(PROPERTY + "=vector unavailable: " + vectorUnavailable.get()
                    + "; auto or scalar runs the scalar kernels");
        }
        return javaKernels(vectorUnavailable);
    }

    /** Auto or native, given the native library's probe and why the vector kernels cannot run. */
    CpuKernels kernels(NativeLibraryProbe probe, Optional<String> vectorUnavailable, Consumer<String> log) {
        CpuKernels java = javaKernels(vectorUnavailable);
        if (this == NATIVE) {
            NativeCpuLibrary library = probe.library().orElseThrow(() -> new BackendUnavailableException(
                    PROPERTY + "=native unavailable: " + probe.problem() + "; auto, vector or scalar run Java kernels"));
            return new NativeKernels(library, java);
        }
        Optional<String> nativeUnusable = probe.unusableForAuto();
        if (nativeUnusable.isEmpty()) {
            NativeCpuLibrary library = probe.library().orElseThrow();
            log.accept("zse: CPU kernels: native " + library.isa() + " (" + library.path() + ")");
            return new NativeKernels(library, java);
        }
        log.accept("zse: CPU kernels: " + java.name() + " (native kernels unusable: " + nativeUnusable.get()
                + vectorUnavailable.map(reason -> "; vector kernels unusable: " + reason).orElse("") + ")");
        return java;
    }

    private static CpuKernels javaKernels(Optional<String> vectorUnavailable) {
        return vectorUnavailable.isEmpty() ? VectorKernels.INSTANCE : ScalarKernels.INSTANCE;
    }

    /**
     * Why the vector kernels cannot run, or empty when they can, given the facts of the process. A native image rules
     * them out for {@code auto} only: an explicit {@code vector} there gets them if the Vector API has its full width
     * (Oracle GraalVM's {@code -H:+VectorAPISupport}); elsewhere it reports a 64-bit preferred vector and is refused.
     * {@code preferredFloatBits} is only asked when the module is there: answering loads the Vector API.
     */
    Optional<String> vectorUnavailable(boolean nativeImage, boolean moduleLoaded, IntSupplier preferredFloatBits) {
        if (nativeImage && this == AUTO) {
            return Optional.of("this is a native image, where the Vector API runs without SIMD");
        }
        if (!moduleLoaded) {
            return Optional.of("the " + MODULE + " module is not loaded (java --add-modules " + MODULE
                    + " enables the vector kernels)");
        }
        int bits = preferredFloatBits.getAsInt();
        if (bits != 256 && bits != 512) {
            return Optional.of("the preferred float vector is " + bits + " bits; the vector kernels need 256 or 512");
        }
        return Optional.empty();
    }
}
