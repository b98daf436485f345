package io.zse.backend.cpu;

import java.util.Optional;

/**
 * Whether libzse_cpu loaded in this process (once, on first ask), and if not, why. {@code zse.cpu.isa} switches it to
 * a kernel set other than the best for this CPU.
 */
record NativeLibraryProbe(Optional<NativeCpuLibrary> library, String problem) {
    /** The set the library falls back to where it has no SIMD kernels for the CPU. */
    static final String GENERIC = "generic";

    private static NativeLibraryProbe result;

    static synchronized NativeLibraryProbe result() {
        if (result == null) {
            result = probe();
        }
        return result;
    }

    private static NativeLibraryProbe probe() {
        var path = NativeCpuLibrary.LOCATION.find();
        if (path.isEmpty()) {
            return new NativeLibraryProbe(Optional.empty(), NativeCpuLibrary.LOCATION.notFound());
        }
        try {
            NativeCpuLibrary library = NativeCpuLibrary.load(path.get());
            String isa = System.getProperty(CpuKernelChoice.ISA_PROPERTY);
            if (isa != null && !isa.isBlank()) {
                library.use(isa.strip());
            }
            return new NativeLibraryProbe(Optional.of(library), "");
        } catch (RuntimeException e) {
            return new NativeLibraryProbe(Optional.empty(), path.get() + ": " + e.getMessage());
        }
    }

    /**
     * Why auto should not take the native kernels: no library, or only its portable C set (the Vector API is faster
     * than plain C there), unless that set was asked for by name.
     */
    Optional<String> unusableForAuto() {
        if (library.isEmpty()) {
            return Optional.of(problem);
        }
        NativeCpuLibrary l = library.get();
        if (l.isa().equals(GENERIC) && System.getProperty(CpuKernelChoice.ISA_PROPERTY) == null) {
            return Optional.of("libzse_cpu has no SIMD kernel set for this CPU (it runs " + l.supported() + ")");
        }
        return Optional.empty();
    }
}
