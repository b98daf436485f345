package io.zse.backend.cuda;

import io.zse.backend.KvCache;
import io.zse.backend.KvRows;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The device copy of one {@link KvCache}, a pair of buffers per layer allocated when the layer is first used. The
 * model stores new keys and values in the host cache right before calling attention, so each attention call uploads
 * only the rows it adds (startPos..startPos+n-1) plus any rows a previous call did not see; a rewind overwrites.
 */
final class DeviceKvCache implements AutoCloseable {
    private final CudaLibrary cuda;
    private final List<DeviceBuffer[]> layers = new ArrayList<>(); // [keys, values] per layer, null until used
    private final List<Integer> mirrored = new ArrayList<>();      // per layer: positions 0..mirrored-1 are on the device
    private final long layerBytes;
    private final int kvDim;

    DeviceKvCache(CudaLibrary cuda, KvCache cache) {
        this.cuda = cuda;
        this.kvDim = cache.kvDim();
        this.layerBytes = (long) cache.capacity() * kvDim * Float.BYTES;
    }

    /** Brings positions below {@code end} of {@code layer} onto the device; rows from {@code startPos} are re-sent. */
    void sync(KvCache cache, int layer, int startPos, int end, StagedBuffer staging, CudaStream stream) {
        DeviceBuffer[] buffers = buffers(layer);
        int from = Math.min(startPos, mirrored.get(layer));
        if (end > from) {
            copy(cache, cache.keys(layer), buffers[0], from, end, staging, stream);
            copy(cache, cache.values(layer), buffers[1], from, end, staging, stream);
        }
        mirrored.set(layer, end);
    }

    /**
     * The device holds F32 rows in position order whatever the host cache type and block table: rows are gathered
     * through the table and F16 and INT8 rows decoded on the way (a device-side paged, quantized cache needs its own
     * attention kernels: the device-resident backend).
     */
    private void copy(KvCache cache, KvRows rows, DeviceBuffer device, int from, int end, StagedBuffer staging,
                      CudaStream stream) {
        int count = (end - from) * kvDim;
        float[] gathered = new float[count];
        for (int p = from; p < end; p++) {
            rows.read(cache.slot(p), gathered, (p - from) * kvDim);
        }
        staging.upload(gathered, 0, count, stream);
        device.copyFrom(staging.device(0), 0, (long) from * kvDim * Float.BYTES, (long) count * Float.BYTES, stream);
        stream.synchronize(); // the staging buffer is reused by the next copy
    }

    private DeviceBuffer[] buffers(int layer) {
        while (layers.size() <= layer) {
            layers.add(null);
            mirrored.add(0);
        }
        if (layers.get(layer) == null) {
            DeviceBuffer keys = new DeviceBuffer(cuda, layerBytes);
            try {
                layers.set(layer, new DeviceBuffer[]{keys, new DeviceBuffer(cuda, layerBytes)});
            } catch (RuntimeException e) {
                keys.close();
                throw e;
            }
        }
        return layers.get(layer);
    }

    MemorySegment keys(int layer) {
        return buffers(layer)[0].at(0, layerBytes);
    }

    MemorySegment values(int layer) {
        return buffers(layer)[1].at(0, layerBytes);
    }

    @Override
    public void close() {
        for (DeviceBuffer[] pair : layers) {
            if (pair != null) {
                pair[0].close();
                pair[1].close();
            }
        }
        layers.clear();
    }
}
