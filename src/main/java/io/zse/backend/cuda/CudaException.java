package io.zse.backend.cuda;

/**
 * A libzse_cuda call that failed: {@code status} is the CUDA runtime error code (35: the driver is missing or too
 * old, 100: no device, 2: out of memory) or -1 for an argument the library refused.
 */
public final class CudaException extends RuntimeException {
    /** cudaErrorInsufficientDriver: no NVIDIA driver, or one older than the CUDA runtime in the library. */
    public static final int INSUFFICIENT_DRIVER = 35;
    /** cudaErrorNoDevice. */
    public static final int NO_DEVICE = 100;
    /** cudaErrorStubLibrary: libcuda.so is a stub (a container without the driver mounted). */
    public static final int STUB_LIBRARY = 34;

    private final int status;

    public CudaException(int status, String message) {
        super(message);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** True when the failure means there is no usable driver on this host (as opposed to a failing device). */
    public boolean isMissingDriver() {
        return status == INSUFFICIENT_DRIVER || status == STUB_LIBRARY;
    }
}
