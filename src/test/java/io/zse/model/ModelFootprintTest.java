package io.zse.model;

import io.zse.TestModels;
import io.zse.backend.KvCacheType;
import io.zse.backend.MemoryFootprint;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The device memory the VRAM check counts for a real file: the KV cache as the CUDA backend holds each type. */
class ModelFootprintTest {
    @TempDir
    Path dir;

    @Test
    void eachCacheTypeCountsTheBytesItsRowsTake() throws IOException {
        try (ZseFile file = ZseFile.open(TestModels.convertTinyStories(TensorType.Q8, dir))) {
            ModelConfig config = ModelConfig.fromJson(file.configJson());
            long perValue = 2L * config.numLayers() * 1000 * config.numKvHeads() * config.headDim();
            MemoryFootprint f32 = ModelFootprint.of(file, config, 1000, 16, KvCacheType.F32);
            assertEquals(4 * perValue, f32.kvCacheBytes());
            assertEquals(2 * perValue, ModelFootprint.of(file, config, 1000, 16, KvCacheType.F16).kvCacheBytes());
            // INT8: a byte a value and an F32 scale per head row, as the device pool holds them (DeviceKvPool)
            assertEquals(perValue + 2L * config.numLayers() * 1000 * config.numKvHeads() * Float.BYTES,
                    ModelFootprint.of(file, config, 1000, 16, KvCacheType.INT8).kvCacheBytes());
            assertEquals(f32.weightBytes(), ModelFootprint.of(file, config, 1000, 16, KvCacheType.F16).weightBytes());
        }
    }
}
