package io.zse.backend;

import io.zse.format.TensorType;

/**
 * A 2-D weight [rows = out_features, cols = in_features] as a backend holds it (the CPU backend: a view of the mapped
 * file; a GPU backend: device memory). Obtained from {@link Backend#weight}.
 */
public interface WeightMatrix {
    /** Output features (PyTorch dim 0). */
    int rows();

    /** Input features (PyTorch dim 1). */
    int cols();

    /** Storage type of the elements. */
    TensorType type();
}
