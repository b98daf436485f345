package io.zse.bench.jlama;

import com.github.tjake.jlama.safetensors.TensorInfo;
import com.github.tjake.jlama.safetensors.WeightLoader;

import java.util.Map;

/** Bytes of weights one decode step streams, counted as zse bench counts them for its own files. */
final class WeightBytes {
    private static final String EMBEDDINGS = "model.embed_tokens.weight";
    private static final String LM_HEAD = "lm_head.weight";

    private WeightBytes() {
    }

    /**
     * Every tensor once (with its block scales, which Jlama stores as tensors of their own), except the embedding
     * table when a separate lm_head exists: then a step reads only one row of it.
     */
    static long perDecodedToken(WeightLoader weights) {
        Map<String, TensorInfo> tensors = weights.tensorInfoMap();
        boolean tied = !tensors.containsKey(LM_HEAD);
        long bytes = 0;
        for (Map.Entry<String, TensorInfo> t : tensors.entrySet()) {
            if (tied || !t.getKey().startsWith(EMBEDDINGS)) {
                bytes += t.getValue().dataOffsets[1] - t.getValue().dataOffsets[0];
            }
        }
        return bytes;
    }
}
