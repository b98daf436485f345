package io.zse.backend.cpu;

import io.zse.backend.BackendUnavailableException;

import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * Which CPU kernels run: {@code vector} (Vector API), {@code scalar} (plain Java, runs anywhere) or {@code auto}, from
 * the system property {@code zse.cpu.kernels}, else the environment variable {@code ZSE_CPU_KERNELS}, else auto.
 * {@code auto} takes the vector kernels where they run with SIMD and the scalar ones elsewhere, logging one line that
 * says why; an explicit {@code vector} that cannot run is a {@link BackendUnavailableException} naming the reason.
 * <p>
 * The vector kernels need: not a native image for {@code auto} (GraalVM CE/Mandrel run the Vector API as plain Java
 * there, far slower than the scalar kernels), the {@code jdk.incubator.vector} module in the boot layer
 * ({@code --add-modules}), and a preferred float vector of 256 or 512 bits, the widths {@link Matmul}'s species and
 * group loops are built for (a 128-bit NEON or {@code -XX:MaxVectorSize=16} JVM gets the scalar kernels). Each check
 * runs only when the previous one passed, so no Vector API class is loaded before the module is known to be there.
 */
public enum CpuKernelChoice {
    AUTO, VECTOR, SCALAR;

    /** The system property (and, upper-cased with _ for ., the environment variable) that sets the choice. */
    public static final String PROPERTY = "zse.cpu.kernels";

    private static final String MODULE = "jdk.incubator.vector";

    private static CpuKernels selected;

    /** Parses auto, vector or scalar (case-insensitive). */
    public static CpuKernelChoice parse(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "auto" -> AUTO;
            case "vector" -> VECTOR;
            case "scalar" -> SCALAR;
            default -> throw new IllegalArgumentException(
                    "unknown CPU kernels '" + text + "' (expected auto, vector or scalar)");
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
     * The kernels of this process: the {@link #resolve() configured} choice, made on first use and kept; an automatic
     * fall-back to scalar is reported as one line on stderr. A failed explicit choice is not kept (it throws again).
     */
    public static synchronized CpuKernels selected() {
        if (selected == null) {
            selected = resolve().kernels(line -> System.err.println(line));
        }
        return selected;
    }

    /** The kernels this choice gives in this process; {@code log} receives the line of an automatic fall-back. */
    public CpuKernels kernels(Consumer<String> log) {
        if (this == SCALAR) {
            return ScalarKernels.INSTANCE;
        }
        return kernels(vectorUnavailable(System.getProperty("org.graalvm.nativeimage.imagecode") != null,
                ModuleLayer.boot().findModule(MODULE).isPresent(), () -> PreferredFloatVector.bits()), log);
    }

    /** As {@link #kernels(Consumer)}, given why the vector kernels cannot run (empty: they can). */
    CpuKernels kernels(Optional<String> vectorUnavailable, Consumer<String> log) {
        if (this == SCALAR) {
            return ScalarKernels.INSTANCE;
        }
        if (vectorUnavailable.isEmpty()) {
            return VectorKernels.INSTANCE;
        }
        if (this == VECTOR) {
            throw new BackendUnavailableException(PROPERTY + "=vector unavailable: " + vectorUnavailable.get()
                    + "; auto or scalar runs the scalar kernels");
        }
        log.accept("zse: using the scalar CPU kernels: " + vectorUnavailable.get());
        return ScalarKernels.INSTANCE;
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
