package io.zse.backend.cuda;

import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCacheType;
import io.zse.format.TensorType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The device memory of one {@link KvBlockPool}: per layer, keys and values [slots, kvDim] numbered like the host
 * pool's slots (block * blockSize + offset), so a sequence's block table means the same on both sides and prefix
 * blocks shared on the host are shared on the device. Written and read only by kernels (zse_cuda_store_kv,
 * zse_cuda_paged_attention); a layer's buffers are allocated when it is first used. The rows are the host pool's
 * type: F32, F16 (the values the CPU's F16 rows hold), or INT8 (the CPU's {@code Int8KvRows}: int8 codes, then at the
 * next 256-byte boundary of the same buffer their F32 scales [slots, numKvHeads]), so the device holds what the
 * pool's size was reckoned at.
 */
final class DeviceKvPool implements AutoCloseable {
    /** zse_cuda.h's ZSE_CUDA_KV_INT8: the kv_type of INT8 rows. */
    static final int INT8_ROWS = 3;

    private final CudaLibrary cuda;
    private final int typeCode;
    private final long elementBytes;  // a layer's keys (or values), scales excluded
    private final long scalesOffset;  // INT8: where a layer's scales start in its buffer
    private final long scalesBytes;   // INT8: their size; 0 for the other types
    private final DeviceBuffer[] keys;
    private final DeviceBuffer[] values;

    DeviceKvPool(CudaLibrary cuda, KvBlockPool pool) {
        this.cuda = cuda;
        this.typeCode = switch (pool.type()) {
            case F32 -> TensorType.F32.code();
            case F16 -> TensorType.F16.code();
            case INT8 -> INT8_ROWS;
        };
        long slots = pool.capacityTokens();
        this.elementBytes = Math.multiplyExact(slots, (long) pool.kvDim() * elementBytes(pool.type()));
        this.scalesOffset = CudaWeight.scalesOffset(elementBytes);
        this.scalesBytes = pool.type() == KvCacheType.INT8
                ? Math.multiplyExact(slots, (long) pool.numKvHeads() * Float.BYTES) : 0;
        this.keys = new DeviceBuffer[pool.layers()];
        this.values = new DeviceBuffer[pool.layers()];
    }

    private static int elementBytes(KvCacheType type) {
        return switch (type) {
            case F32 -> Float.BYTES;
            case F16 -> 2;
            case INT8 -> 1;
        };
    }

    /** The kv_type the kernels take for this pool's rows. */
    int typeCode() {
        return typeCode;
    }

    MemorySegment keys(int layer) {
        allocate(layer);
        return keys[layer].at(0, elementBytes);
    }

    MemorySegment values(int layer) {
        allocate(layer);
        return values[layer].at(0, elementBytes);
    }

    /** The INT8 rows' scales of the layer's keys; NULL for the other types. */
    MemorySegment keyScales(int layer) {
        return scales(keys, layer);
    }

    /** The INT8 rows' scales of the layer's values; NULL for the other types. */
    MemorySegment valueScales(int layer) {
        return scales(values, layer);
    }

    private MemorySegment scales(DeviceBuffer[] rows, int layer) {
        if (scalesBytes == 0) {
            return MemorySegment.NULL;
        }
        allocate(layer);
        return rows[layer].at(scalesOffset, scalesBytes);
    }

    /** Bytes the device holds for each layer's keys, or values, once in use. */
    long layerBytes() {
        return scalesBytes == 0 ? elementBytes : scalesOffset + scalesBytes;
    }

    /** A host copy of the layer's keys (or values) buffer as stored, scales included (tests). */
    MemorySegment copyOut(int layer, boolean ofKeys, Arena arena, CudaStream stream) {
        allocate(layer);
        MemorySegment host = arena.allocate(layerBytes());
        (ofKeys ? keys : values)[layer].copyTo(host, 0, stream);
        stream.synchronize();
        return host;
    }

    private void allocate(int layer) {
        if (keys[layer] == null) {
            DeviceBuffer k = new DeviceBuffer(cuda, layerBytes());
            try {
                values[layer] = new DeviceBuffer(cuda, layerBytes());
            } catch (RuntimeException e) {
                k.close();
                throw e;
            }
            keys[layer] = k;
        }
    }

    @Override
    public void close() {
        List<DeviceBuffer> layers = new ArrayList<>();
        for (int layer = 0; layer < keys.length; layer++) {
            layers.add(keys[layer]);
            layers.add(values[layer]);
            keys[layer] = null;
            values[layer] = null;
        }
        Resources.closeAll(layers);
    }
}
