package io.zse.backend.cpu;

import java.util.Optional;

/** The CPU kernel families by the names tests parameterize over: {@code vector} and {@code scalar}. */
public final class TestKernels {
    private TestKernels() {
    }

    /** The family named; the vector one must be available (the build runs with jdk.incubator.vector). */
    public static CpuKernels named(String name) {
        return CpuKernelChoice.parse(name).kernels(line -> {
            throw new IllegalStateException("no fall-back expected for " + name + ": " + line);
        });
    }

    /** Why this process has no native kernel library, or empty when it has one. */
    public static Optional<String> nativeUnavailable() {
        NativeLibraryProbe probe = NativeLibraryProbe.result();
        return probe.library().isPresent() ? Optional.empty() : Optional.of(probe.problem());
    }

    /** A CPU backend on the family named, with {@code threads} threads. */
    public static CpuBackend backend(String name, int threads) {
        return new CpuBackend(threads, named(name));
    }

    /**
     * The activations as the native integer kernels see them: per block of 32,
     * round(x * 127 / max|x|) * max|x| / 127.
     */
    public static float[] int8Activations(float[] x) {
        float[] q = new float[x.length];
        for (int b = 0; b < x.length; b += 32) {
            float amax = 0;
            for (int k = b; k < b + 32; k++) {
                amax = Math.max(amax, Math.abs(x[k]));
            }
            float scale = amax / 127f;
            float inverse = amax == 0 ? 0 : 127f / amax;
            for (int k = b; k < b + 32; k++) {
                q[k] = (float) Math.rint(x[k] * inverse) * scale;
            }
        }
        return q;
    }
}
