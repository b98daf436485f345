package io.zse.model;

import io.zse.backend.KvCacheType;
import io.zse.backend.MemoryFootprint;
import io.zse.format.ZseFile;

/** The device memory a model in a .zse file will need, from its tensors and config (for the backend's VRAM check). */
public final class ModelFootprint {
    private ModelFootprint() {
    }

    /**
     * @param positions KV cache positions held at once (all sequences together)
     * @param batchRows the most tokens one forward pass processes
     * @param kvType    the KV cache type, which the CUDA backend's device pool holds as the CPU's does (INT8: int8
     *                  codes with an F32 scale per head row)
     */
    public static MemoryFootprint of(ZseFile file, ModelConfig config, long positions, int batchRows,
                                     KvCacheType kvType) {
        int kvDim = config.numKvHeads() * config.headDim();
        int qDim = config.numHeads() * config.headDim();
        // Per token: residual, normed, projected (3 d), q and attended (2 q), k and v (2 kv), gate and up (2 ff),
        // logits, and the int8 form of the widest product input (ff codes and two floats per 32: 5/16 float a value).
        long rowFloats = 3L * config.hiddenSize() + 2L * qDim + 2L * kvDim + 2L * config.intermediateSize()
                + config.vocabSize() + (5L * config.intermediateSize() + 15) / 16;
        return MemoryFootprint.of(file.tensors(), config.numLayers(),
                kvType.bytesPerRow(config.numKvHeads(), config.headDim()), positions, batchRows, rowFloats);
    }
}
