package io.zse.backend;

/**
 * F32 activations owned by a {@link Backend}: off-heap memory on the CPU, device memory on CUDA. A forward pass
 * allocates its buffers once for a batch size and reuses them; token ids go in and only the logits rows the sampler
 * needs come back ({@link Backend#read}). {@link #close} frees the memory.
 */
public interface ActivationBuffer extends AutoCloseable {
    /** Floats it holds. */
    long capacity();

    @Override
    void close();
}
