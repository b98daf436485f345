package io.zse.backend.cuda;

import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCacheType;
import io.zse.format.TensorType;

import java.lang.foreign.MemorySegment;

/**
 * The device memory of one {@link KvBlockPool}: per layer, keys and values [slots, kvDim] numbered like the host
 * pool's slots (block * blockSize + offset), so a sequence's block table means the same on both sides and prefix
 * blocks shared on the host are shared on the device. Written and read only by kernels (zse_cuda_store_kv,
 * zse_cuda_paged_attention); a layer's buffers are allocated when it is first used. An F16 pool holds F16 rows (the
 * values the CPU's F16 rows hold), every other type F32 rows (INT8 pools too: the device has no INT8 kernels).
 */
final class DeviceKvPool implements AutoCloseable {
    private final CudaLibrary cuda;
    private final int typeCode;
    private final long layerBytes;
    private final DeviceBuffer[] keys;
    private final DeviceBuffer[] values;

    DeviceKvPool(CudaLibrary cuda, KvBlockPool pool) {
        this.cuda = cuda;
        this.typeCode = typeCode(pool);
        this.layerBytes = Math.multiplyExact(pool.capacityTokens(), (long) pool.kvDim() * valueBytes(pool));
        this.keys = new DeviceBuffer[pool.layers()];
        this.values = new DeviceBuffer[pool.layers()];
    }

    /** The storage type code of the rows on the device (the kernels' kv_type): F16 for F16 pools, else F32. */
    private static int typeCode(KvBlockPool pool) {
        return pool.type() == KvCacheType.F16 ? TensorType.F16.code() : TensorType.F32.code();
    }

    private static int valueBytes(KvBlockPool pool) {
        return pool.type() == KvCacheType.F16 ? 2 : Float.BYTES;
    }

    /** The kv_type the kernels take for this pool's rows. */
    int typeCode() {
        return typeCode;
    }

    /** Bytes the device holds for a pool like this one when every layer is in use. */
    static long bytes(KvBlockPool pool) {
        return 2L * pool.layers() * pool.capacityTokens() * pool.kvDim() * valueBytes(pool);
    }

    MemorySegment keys(int layer) {
        allocate(layer);
        return keys[layer].at(0, layerBytes);
    }

    MemorySegment values(int layer) {
        allocate(layer);
        return values[layer].at(0, layerBytes);
    }

    private void allocate(int layer) {
        if (keys[layer] == null) {
            DeviceBuffer k = new DeviceBuffer(cuda, layerBytes);
            try {
                values[layer] = new DeviceBuffer(cuda, layerBytes);
            } catch (RuntimeException e) {
                k.close();
                throw e;
            }
            keys[layer] = k;
        }
    }

    @Override
    public void close() {
        for (int layer = 0; layer < keys.length; layer++) {
            if (keys[layer] != null) {
                keys[layer].close();
                values[layer].close();
                keys[layer] = null;
                values[layer] = null;
            }
        }
    }
}
