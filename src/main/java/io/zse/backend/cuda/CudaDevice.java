package io.zse.backend.cuda;

/**
 * One GPU as the driver reports it.
 *
 * @param totalBytes device memory
 * @param freeBytes  memory free when it was queried
 */
public record CudaDevice(int index, String name, long totalBytes, long freeBytes, int major, int minor,
                         int multiprocessors) {
    /** The kernels are compiled for sm_80 and newer (plus compute_90 PTX); older GPUs cannot run them. */
    public static final int MIN_MAJOR = 8;

    public boolean isSupported() {
        return major >= MIN_MAJOR;
    }

    @Override
    public String toString() {
        return String.format("cuda:%d %s (sm_%d%d, %.1f GiB, %.1f GiB free)", index, name, major, minor,
                totalBytes / (double) (1L << 30), freeBytes / (double) (1L << 30));
    }
}
