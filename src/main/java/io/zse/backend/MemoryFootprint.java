package io.zse.backend;

import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Device memory a model needs before it is loaded: its weights as stored, the KV cache for the positions it will
 * hold, and a workspace for activations. Also what the weights would take in each other storage type, so a refusal
 * can say which conversion would fit.
 *
 * @param weightBytes        the tensors as stored in the .zse file
 * @param kvCacheBytes       keys and values of every layer for the planned positions, as the cache type stores them
 * @param workspaceBytes     activations of the largest batch plus a fixed margin for the runtime's own buffers, and
 *                           while the weights upload the scratch that rewrites interleaved-16 weights on the device
 *                           (the largest such weight)
 * @param weightBytesAsType  the weights converted to each type (converter defaults: 1-D tensors stay F32; with q4/nf4
 *                           the embeddings and lm_head stay Q8)
 */
public record MemoryFootprint(long weightBytes, long kvCacheBytes, long workspaceBytes,
                              Map<TensorType, Long> weightBytesAsType) {
    /** Runtime margin: cuBLAS-free, but kernels' shared-memory carve-outs and graph memory still take some. */
    static final long MARGIN_BYTES = 256L << 20;

    public long totalBytes() {
        return weightBytes + kvCacheBytes + workspaceBytes;
    }

    /**
     * @param tensors    every tensor of the file
     * @param layers     decoder layers
     * @param kvRowBytes bytes the device holds for one position's keys (or values) of one layer
     * @param positions  KV cache positions that will be held at once (all sequences together)
     * @param batchRows  the most tokens one forward pass processes (prompt chunk or decode batch)
     * @param rowFloats  F32 values of activations per token (hidden, q, k, v, two ffn rows, logits, ...)
     */
    public static MemoryFootprint of(List<TensorInfo> tensors, int layers, long kvRowBytes, long positions,
                                     int batchRows, long rowFloats) {
        long weights = 0;
        long scratch = 0;
        for (TensorInfo t : tensors) {
            long bytes = t.type().dataBytes(t.elementCount()) + t.type().scaleBytes(t.elementCount(), t.groupSize());
            weights += bytes;
            if (t.layout() == ZseLayout.LAYOUT_INTERLEAVED_16) {
                scratch = Math.max(scratch, bytes);
            }
        }
        Map<TensorType, Long> asType = new LinkedHashMap<>();
        for (TensorType type : TensorType.values()) {
            asType.put(type, tensors.stream().mapToLong(t -> bytesAs(t, type)).sum());
        }
        long kv = 2L * layers * positions * kvRowBytes;
        long workspace = (long) batchRows * rowFloats * Float.BYTES + MARGIN_BYTES + scratch;
        return new MemoryFootprint(weights, kv, workspace, Map.copyOf(asType));
    }

    private static long bytesAs(TensorInfo t, TensorType target) {
        TensorType type = target;
        if (t.rank() != 2) {
            type = TensorType.F32;
        } else if ((target == TensorType.Q4 || target == TensorType.NF4) && isEmbeddingOrHead(t.name())) {
            type = TensorType.Q8;
        }
        if (type.isQuantized() && t.rowLength() % type.defaultGroupSize() != 0) {
            type = TensorType.F16;
        }
        long n = t.elementCount();
        return type.dataBytes(n) + type.scaleBytes(n, type.defaultGroupSize());
    }

    private static boolean isEmbeddingOrHead(String name) {
        return name.endsWith("embed_tokens.weight") || name.equals("lm_head.weight");
    }

    /**
     * Null when the model fits in {@code freeBytes}; otherwise the refusal: what is needed, what is missing, and the
     * most precise storage type whose weights would fit (or that none does).
     */
    public String refusal(String device, long freeBytes) {
        if (totalBytes() <= freeBytes) {
            return null;
        }
        StringBuilder s = new StringBuilder(String.format(
                "the model needs %s on %s (weights %s + KV cache %s + workspace %s) but only %s is free: %s missing",
                gib(totalBytes()), device, gib(weightBytes), gib(kvCacheBytes), gib(workspaceBytes), gib(freeBytes),
                gib(totalBytes() - freeBytes)));
        long rest = kvCacheBytes + workspaceBytes;
        for (TensorType type : List.of(TensorType.F16, TensorType.Q8, TensorType.Q4, TensorType.NF4)) {
            long as = weightBytesAsType.get(type);
            if (as < weightBytes && as + rest <= freeBytes) {
                return s.append(String.format("; converted with --quant %s it would need %s and fit",
                        type.name().toLowerCase(), gib(as + rest))).toString();
            }
        }
        return s.append("; no storage type fits: use a device with more memory or a shorter context").toString();
    }

    private static String gib(long bytes) {
        return String.format("%.2f GiB", bytes / (double) (1L << 30));
    }
}
