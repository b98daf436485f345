package io.zse.backend;

import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cuda.CudaDevice;
import io.zse.backend.cuda.CudaLibrary;
import io.zse.backend.cuda.CudaProbe;

import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Turns a {@link BackendChoice} into a running backend. {@code auto} takes CUDA when a usable device has room for the
 * model and otherwise the CPU, logging one line that says why; an explicit {@code cuda} that cannot be honoured is a
 * {@link BackendUnavailableException} naming the reason (no library, no driver, no device, too little memory).
 * The CLI commands and the server call this.
 */
public final class BackendSelector {
    private final Supplier<CudaProbe> probe;
    private final Consumer<String> log;

    /** @param log where the fallback line goes (the CLI: stderr) */
    public BackendSelector(Consumer<String> log) {
        this(CudaProbe::run, log);
    }

    /** With another probe (tests point it at a given library path). */
    public BackendSelector(Supplier<CudaProbe> probe, Consumer<String> log) {
        this.probe = probe;
        this.log = log;
    }

    /**
     * @param footprint  what the model will need on the device; empty skips the VRAM check
     * @param cpuThreads threads of the CPU backend when it is chosen
     */
    public Backend select(BackendChoice choice, Optional<MemoryFootprint> footprint, int cpuThreads) {
        if (choice.kind() == BackendChoice.Kind.CPU) {
            return new CpuBackend(cpuThreads);
        }
        CudaProbe found = probe.get();
        String reason = found.reason().orElse(null);
        CudaDevice device = null;
        if (reason == null) {
            device = found.device(choice.device()).orElse(null);
            if (device == null) {
                reason = "no usable CUDA device " + choice.device() + " (found " + found.devices() + ")";
            } else if (footprint.isPresent()) {
                reason = footprint.get().refusal("cuda:" + device.index() + " " + device.name(), device.freeBytes());
            }
        }
        if (reason != null) {
            if (choice.kind() == BackendChoice.Kind.CUDA) {
                throw new BackendUnavailableException("backend " + choice + " unavailable: " + reason);
            }
            log.accept("zse: running on the CPU: " + reason);
            return new CpuBackend(cpuThreads);
        }
        CudaLibrary library = found.library().orElseThrow();
        library.bindAllInBackground();
        return new CudaBackend(library, device);
    }
}
