package io.zse.backend.cpu;

import java.lang.foreign.MemorySegment;

import static io.zse.backend.cpu.HostActivations.FLOAT;

/**
 * The element-wise ops as plain Java loops over F32 activations ({@link HostActivations}): what the Java kernel
 * families run (the JIT vectorizes them once warm). The native kernels repeat these float operations in C.
 */
final class JavaElementwise {
    private JavaElementwise() {
    }

    /** See {@link io.zse.backend.Backend#rmsNorm}; the sum of squares in double. */
    static void rmsNorm(MemorySegment x, int n, float[] weight, float eps, MemorySegment out) {
        int dim = weight.length;
        for (int i = 0; i < n; i++) {
            long row = (long) i * dim;
            double sumOfSquares = 0;
            for (int k = 0; k < dim; k++) {
                float v = x.getAtIndex(FLOAT, row + k);
                sumOfSquares += (double) v * v;
            }
            float inverseRms = (float) (1.0 / Math.sqrt(sumOfSquares / dim + eps));
            for (int k = 0; k < dim; k++) {
                out.setAtIndex(FLOAT, row + k, weight[k] * (x.getAtIndex(FLOAT, row + k) * inverseRms));
            }
        }
    }

    /** Rows [fromRow, toRow) of x, row i at positions[i]; see {@link io.zse.backend.Backend#rope}. */
    static void rope(MemorySegment x, int fromRow, int toRow, int[] positions, int heads, int headDim,
                     float[] inverseFrequencies) {
        int half = headDim / 2;
        for (int i = fromRow; i < toRow; i++) {
            float position = positions[i];
            for (int j = 0; j < half; j++) {
                // The angle in F32 like the reference implementation; cos and sin of it rounded once.
                float angle = position * inverseFrequencies[j];
                float cos = (float) Math.cos(angle);
                float sin = (float) Math.sin(angle);
                for (int h = 0; h < heads; h++) {
                    long base = ((long) i * heads + h) * headDim;
                    float a = x.getAtIndex(FLOAT, base + j);
                    float b = x.getAtIndex(FLOAT, base + j + half);
                    x.setAtIndex(FLOAT, base + j, a * cos - b * sin);
                    x.setAtIndex(FLOAT, base + j + half, b * cos + a * sin);
                }
            }
        }
    }

    static void add(MemorySegment x, MemorySegment y, int length) {
        for (long k = 0; k < length; k++) {
            x.setAtIndex(FLOAT, k, x.getAtIndex(FLOAT, k) + y.getAtIndex(FLOAT, k));
        }
    }

    static void scale(MemorySegment x, int length, float factor) {
        for (long k = 0; k < length; k++) {
            x.setAtIndex(FLOAT, k, x.getAtIndex(FLOAT, k) * factor);
        }
    }

    /** gate = relu(gate)² · up: one multiply-add per element, far from where the time goes. */
    static void reluSquaredGlu(MemorySegment gate, MemorySegment up, int length) {
        for (long k = 0; k < length; k++) {
            float g = Math.max(gate.getAtIndex(FLOAT, k), 0f);
            gate.setAtIndex(FLOAT, k, g * g * up.getAtIndex(FLOAT, k));
        }
    }
}
