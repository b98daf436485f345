package io.zse.convert.gguf;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** llama.cpp's tensor names ({@code blk.N.attn_q.weight}) back to Hugging Face's ({@code model.layers.N...}). */
final class GgufTensorNames {
    static final String ROPE_FREQS = "rope_freqs.weight";
    static final String ROPE_FACTORS_SHORT = "rope_factors_short.weight";
    static final String ROPE_FACTORS_LONG = "rope_factors_long.weight";
    static final String OUTPUT = "output.weight";
    static final String EMBEDDINGS = "token_embd.weight";

    private static final Map<String, String> GLOBAL = Map.of(
            EMBEDDINGS, "model.embed_tokens.weight",
            "output_norm.weight", "model.norm.weight",
            OUTPUT, "lm_head.weight");
    /** Qwen3's and Gemma 3's per-head q/k norms included: the model's config decides whether they belong. */
    private static final Map<String, String> LAYER = Map.ofEntries(
            Map.entry("attn_norm", "input_layernorm"),
            Map.entry("attn_q", "self_attn.q_proj"),
            Map.entry("attn_qkv", "self_attn.qkv_proj"),
            Map.entry("attn_k", "self_attn.k_proj"),
            Map.entry("attn_v", "self_attn.v_proj"),
            Map.entry("attn_output", "self_attn.o_proj"),
            Map.entry("attn_q_norm", "self_attn.q_norm"),
            Map.entry("attn_k_norm", "self_attn.k_norm"),
            Map.entry("ffn_norm", "post_attention_layernorm"),
            Map.entry("ffn_gate", "mlp.gate_proj"),
            Map.entry("ffn_up", "mlp.up_proj"),
            Map.entry("ffn_down", "mlp.down_proj"));
    /** Gemma's norms: llama.cpp's ffn_norm is its pre-feed-forward norm, and it has three more. */
    private static final Map<String, String> GEMMA_LAYER = Map.of(
            "ffn_norm", "pre_feedforward_layernorm",
            "post_attention_norm", "post_attention_layernorm",
            "post_ffw_norm", "post_feedforward_layernorm");
    /** BitNet's RMSNorms of the attention output and of the gated activations, before o_proj and down_proj. */
    private static final Map<String, String> BITNET_LAYER = Map.of(
            "attn_sub_norm", "self_attn.attn_sub_norm",
            "ffn_sub_norm", "mlp.ffn_sub_norm");
    /** Phi-3's ffn_up is its fused gate_up_proj (gate rows, then up rows), as in its Hugging Face checkpoint. */
    private static final Map<String, String> PHI3_LAYER = Map.of("ffn_up", "mlp.gate_up_proj");
    private static final Pattern BLOCK = Pattern.compile("blk\\.(\\d{1,6})\\.([a-z_]+)\\.(weight|bias)");
    /** llama.cpp's optional per-tensor scale of a BitNet projection ({@code blk.N.attn_q.scale}, F32 [1]). */
    static final String SCALE_SUFFIX = ".scale";

    private GgufTensorNames() {
    }

    /**
     * The Hugging Face checkpoint's name (Phi-3's fused {@code qkv_proj} and {@code gate_up_proj} stay fused), or null if the name is not one of a Llama-family decoder's tensors; {@code architecture}
     * is the GGUF's general.architecture.
     */
    /** The weight a {@code .scale} tensor multiplies ({@code blk.0.attn_q.scale} → {@code blk.0.attn_q.weight}), or null. */
    static String scaledWeight(String name) {
        return name.startsWith("blk.") && name.endsWith(SCALE_SUFFIX)
                ? name.substring(0, name.length() - SCALE_SUFFIX.length()) + ".weight" : null;
    }

    static String toHf(String name, String architecture) {
        String global = GLOBAL.get(name);
        if (global != null) {
            return global;
        }
        Matcher m = BLOCK.matcher(name);
        if (!m.matches()) {
            return null;
        }
        Map<String, String> special = architecture.startsWith("gemma") ? GEMMA_LAYER
                : architecture.equals("phi3") ? PHI3_LAYER : architecture.startsWith("bitnet") ? BITNET_LAYER : Map.of();
        String part = special.getOrDefault(m.group(2), LAYER.get(m.group(2)));
        if (part == null || (m.group(3).equals("bias") && part.endsWith("norm"))) {
            return null;
        }
        return "model.layers." + Integer.parseInt(m.group(1)) + "." + part + "." + m.group(3);
    }
}
