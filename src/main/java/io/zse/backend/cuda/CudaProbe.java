package io.zse.backend.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Finds out whether CUDA can be used here and, if not, why: no library, a library that will not load, no driver, no
 * device, or only devices older than sm_80. Never throws and never lets native code see an unchecked argument.
 *
 * @param library the loaded library; empty when it could not be loaded
 * @param devices the supported devices; empty when CUDA is unusable
 * @param reason  why CUDA is unusable; empty when it is usable
 */
public record CudaProbe(Optional<CudaLibrary> library, List<CudaDevice> devices, Optional<String> reason) {

    public boolean usable() {
        return reason.isEmpty();
    }

    /** The probe {@link #startEarly} began, for the next {@link #run()} to take. */
    private static final AtomicReference<CompletableFuture<CudaProbe>> EARLY = new AtomicReference<>();
    /** When the last probe {@link #startEarly} began had finished (System.nanoTime()); 0 before. */
    private static volatile long earlyFinishedNanos;

    /**
     * Starts {@link #run()}'s probe on a background thread. Bringing up the driver and the device's context takes a
     * few hundred milliseconds on a datacenter GPU, which a starting process can spend meanwhile on its own start
     * (classes, Quarkus, the model file); the next {@link #run()} takes this probe's result.
     */
    public static CompletableFuture<CudaProbe> startEarly() {
        CompletableFuture<CudaProbe> probe = CompletableFuture.supplyAsync(() -> {
            CudaProbe found = probeDefault();
            earlyFinishedNanos = System.nanoTime();
            return found;
        });
        EARLY.set(probe);
        return probe;
    }

    /** When the probe {@link #startEarly} began had finished, as System.nanoTime(): for zse generate's --timings. */
    public static OptionalLong earlyProbeFinished() {
        long at = earlyFinishedNanos;
        return at == 0 ? OptionalLong.empty() : OptionalLong.of(at);
    }

    /** The probe {@link #startEarly} began, if one is pending, else a new one ({@link #probeDefault}). */
    public static CudaProbe run() {
        CompletableFuture<CudaProbe> early = EARLY.getAndSet(null);
        return early != null ? early.join() : probeDefault();
    }

    /**
     * Probes with the library {@link CudaLibraryPath#find()} picks. Without a loadable driver library it answers at
     * once: loading ours and asking the runtime would take a tenth of a second of every CPU-only cold start to learn
     * the same.
     */
    static CudaProbe probeDefault() {
        Optional<Path> path = CudaLibraryPath.find();
        if (path.isEmpty()) {
            return unusable(null, "no CUDA library (" + CudaLibraryPath.FILE_NAME + " not found in "
                    + CudaLibraryPath.besideApp() + "; set " + CudaLibraryPath.PROPERTY + ")");
        }
        if (Files.isRegularFile(path.get()) && !CudaLibraryPath.isEmulation(path.get()) && !driverLoadable()) {
            return unusable(null, "no NVIDIA driver (" + DRIVER_LIBRARY + " cannot be loaded)");
        }
        return run(path.get());
    }

    /** The driver's user-space library, which the CUDA runtime loads on its first call. */
    static final String DRIVER_LIBRARY = "libcuda.so.1";

    static boolean driverLoadable() {
        try {
            SymbolLookup.libraryLookup(DRIVER_LIBRARY, Arena.global());
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Probes with the library at {@code path}. */
    public static CudaProbe run(Path path) {
        if (!Files.isRegularFile(path)) {
            return unusable(null, "no CUDA library (" + path + " does not exist)");
        }
        CudaLibrary library;
        try {
            library = CudaLibrary.load(path);
        } catch (IllegalArgumentException | IllegalStateException e) {
            return unusable(null, "CUDA library " + path + " cannot be used: " + e.getMessage());
        }
        int count;
        try {
            count = library.deviceCount();
        } catch (CudaException e) {
            if (e.isMissingDriver()) {
                return unusable(library, "no NVIDIA driver (" + e.getMessage() + ")");
            }
            if (e.status() == CudaException.NO_DEVICE) {
                return unusable(library, "no CUDA device (" + e.getMessage() + ")");
            }
            return unusable(library, "CUDA unavailable (" + e.getMessage() + ")");
        }
        if (count == 0) {
            return unusable(library, "no CUDA device");
        }
        List<CudaDevice> supported = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            try {
                CudaDevice device = library.device(i);
                if (device.isSupported()) {
                    supported.add(device);
                } else {
                    refused.add(device + ": compute capability below 8.0");
                }
            } catch (CudaException e) {
                refused.add("cuda:" + i + ": " + e.getMessage());
            }
        }
        if (supported.isEmpty()) {
            return unusable(library, "no usable CUDA device (" + String.join("; ", refused) + ")");
        }
        return new CudaProbe(Optional.of(library), List.copyOf(supported), Optional.empty());
    }

    private static CudaProbe unusable(CudaLibrary library, String reason) {
        return new CudaProbe(Optional.ofNullable(library), List.of(), Optional.of(reason));
    }

    /** The device with this index, if it is usable. */
    public Optional<CudaDevice> device(int index) {
        return devices.stream().filter(d -> d.index() == index).findFirst();
    }
}
