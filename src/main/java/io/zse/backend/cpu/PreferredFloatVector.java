package io.zse.backend.cpu;

import jdk.incubator.vector.FloatVector;

/**
 * This JVM's preferred float vector width, which {@link Matmul} builds its species from. A class of its own so that
 * {@link CpuKernelChoice} can ask it without loading any kernel (the JVM's verifier would load {@link Matmul} with
 * {@link VectorKernels}).
 */
final class PreferredFloatVector {
    private PreferredFloatVector() {
    }

    static int bits() {
        return FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }
}
