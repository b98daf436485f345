package io.zse.backend.cuda;

import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.TestKernels;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A CUDA test class's setup, registered as a static {@code @RegisterExtension} field: every test of the class is
 * skipped, with the reason, where {@link TestCudaLibrary} finds no usable library; where it does, the backends the
 * class asked for are opened before its first test and closed after its last.
 */
public final class CudaTestBackends implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {
    private final boolean opensCuda;
    private final boolean opensCpu;
    private CudaProbe probe;
    private CudaBackend cuda;
    private CpuBackend cpu;

    private CudaTestBackends(boolean opensCuda, boolean opensCpu) {
        this.opensCuda = opensCuda;
        this.opensCpu = opensCpu;
    }

    /** The library and its device only: the class opens what it needs itself. */
    public static CudaTestBackends libraryOnly() {
        return new CudaTestBackends(false, false);
    }

    /** A CUDA backend of the default settings. */
    public static CudaTestBackends cudaOnly() {
        return new CudaTestBackends(true, false);
    }

    /**
     * A CUDA backend and the CPU backend its kernels are compared against: the vector kernels, whose activations are
     * floats, as the CUDA kernels'.
     */
    public static CudaTestBackends cudaAndCpu() {
        return new CudaTestBackends(true, true);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        probe = TestCudaLibrary.probe();
        if (!probe.usable()) {
            return;
        }
        if (opensCuda) {
            cuda = new CudaBackend(library(), device());
        }
        if (opensCpu) {
            cpu = new CpuBackend(2, TestKernels.named("vector"));
        }
    }

    /** Per test, so that each one is reported as skipped with the reason. */
    @Override
    public void beforeEach(ExtensionContext context) {
        assumeTrue(probe.usable(), TestCudaLibrary::skipReason);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (cuda != null) {
            cuda.close();
            cuda = null;
        }
        if (cpu != null) {
            cpu.close();
            cpu = null;
        }
    }

    public CudaProbe probe() {
        return probe;
    }

    public CudaLibrary library() {
        return probe.library().orElseThrow();
    }

    /** The first device the probe found. */
    public CudaDevice device() {
        return probe.devices().getFirst();
    }

    public CudaBackend cuda() {
        return opened(cuda, "a CUDA backend: register cudaOnly() or cudaAndCpu()");
    }

    public CpuBackend cpu() {
        return opened(cpu, "a CPU backend: register cudaAndCpu()");
    }

    private static <B> B opened(B backend, String what) {
        if (backend == null) {
            throw new IllegalStateException("this class's CudaTestBackends did not open " + what);
        }
        return backend;
    }
}
