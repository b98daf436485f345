package io.zse.model;

import java.util.List;

/**
 * What Gemma 2 and Gemma 3 change in the Llama-family decoder; null in a {@link ModelConfig} of any other family.
 * The rest of Gemma needs no option: its GeGLU feed-forward, its pre- and post- attention and feed-forward norms and
 * (Gemma 3) its per-head q/k norms follow from the architecture, and its RMSNorm's (1 + w) is folded into the stored
 * norm weights at convert time, as llama.cpp's GGUF files already hold them.
 *
 * @param embeddingScale   embeddings are multiplied by this: sqrt(hidden_size), rounded to the checkpoint's dtype as
 *                         transformers rounds it (so 33.94 becomes 34.0 for a bfloat16 model of width 1152)
 * @param queryScale       attention logits are q·k times this, query_pre_attn_scalar^-1/2 (not headDim^-1/2)
 * @param attentionSoftCap attention logits become cap·tanh(logit / cap) before the softmax; 0 for none
 * @param finalSoftCap     output logits the same; 0 for none
 * @param slidingLayers    one per layer: true where attention is local (the config's sliding window), false where
 *                         it is global
 * @param localRopeTheta   RoPE base of the local layers, unscaled (Gemma 3's rope_local_base_freq); global layers use
 *                         rope_theta with rope_scaling
 */
public record GemmaOptions(double embeddingScale, double queryScale, double attentionSoftCap, double finalSoftCap,
                           List<Boolean> slidingLayers, double localRopeTheta) {
    public GemmaOptions {
        slidingLayers = List.copyOf(slidingLayers);
        if (!(embeddingScale > 0) || !(queryScale > 0) || !(attentionSoftCap >= 0) || !(finalSoftCap >= 0)) {
            throw new IllegalArgumentException("gemma options out of range: embedding scale " + embeddingScale
                    + ", query scale " + queryScale + ", soft caps " + attentionSoftCap + " / " + finalSoftCap);
        }
        ModelConfig.requireRopeBase("gemma option 'local_rope_theta'", localRopeTheta);
    }

    /** Whether layer {@code layer} attends locally. */
    public boolean sliding(int layer) {
        return slidingLayers.get(layer);
    }
}
