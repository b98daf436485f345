package io.zse.backend.cpu;

import io.zse.backend.ActivationBuffer;

/**
 * The CPU backend's activations: a float array the kernels read and write directly (the Vector API kernels load
 * arrays; the garbage collector frees it when the forward pass that allocated it lets go).
 */
final class HostActivations implements ActivationBuffer {
    final float[] data;

    HostActivations(int floats) {
        this.data = new float[floats];
    }

    @Override
    public long capacity() {
        return data.length;
    }

    @Override
    public void close() {
    }
}
