package io.zse.model;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tensors of a Llama-family model, by Hugging Face name, with the shape the config implies: as a .zse file holds
 * them ({@link #expected}) and as the Hugging Face checkpoint holds them ({@link #checkpoint}; they differ for Phi-3,
 * whose fused projections are split at convert time).
 */
public final class ModelTensors {
    private ModelTensors() {
    }

    public static final String EMBEDDINGS = "model.embed_tokens.weight";
    public static final String LM_HEAD = "lm_head.weight";
    public static final String FINAL_NORM = "model.norm.weight";

    public static String layer(int layer, String suffix) {
        return "model.layers." + layer + "." + suffix;
    }

    /** Every tensor in file order (lm_head only when not tied), shapes outermost first. */
    public static Map<String, long[]> expected(ModelConfig c) {
        Map<String, long[]> t = new LinkedHashMap<>();
        long d = c.hiddenSize();
        long q = (long) c.numHeads() * c.headDim();
        long kv = (long) c.numKvHeads() * c.headDim();
        long ff = c.intermediateSize();
        t.put(EMBEDDINGS, new long[]{c.vocabSize(), d});
        for (int i = 0; i < c.numLayers(); i++) {
            t.put(layer(i, "input_layernorm.weight"), new long[]{d});
            linear(t, layer(i, "self_attn.q_proj"), q, d, c.attentionBias());
            linear(t, layer(i, "self_attn.k_proj"), kv, d, c.attentionBias());
            linear(t, layer(i, "self_attn.v_proj"), kv, d, c.attentionBias());
            if (c.queryKeyNorm()) {
                t.put(layer(i, "self_attn.q_norm.weight"), new long[]{c.headDim()});
                t.put(layer(i, "self_attn.k_norm.weight"), new long[]{c.headDim()});
            }
            // Llama's attention_bias also puts a bias on o_proj; Qwen2's q/k/v biases do not.
            if (c.bitnet()) {
                t.put(layer(i, "self_attn.attn_sub_norm.weight"), new long[]{d});
            }
            linear(t, layer(i, "self_attn.o_proj"), d, q, c.attentionBias() && c.architecture().equals("llama"));
            t.put(layer(i, "post_attention_layernorm.weight"), new long[]{d});
            if (c.gemma() != null) { // Gemma norms the attention output, and both ends of the feed-forward
                t.put(layer(i, "pre_feedforward_layernorm.weight"), new long[]{d});
                t.put(layer(i, "post_feedforward_layernorm.weight"), new long[]{d});
            }
            linear(t, layer(i, "mlp.gate_proj"), ff, d, c.mlpBias());
            linear(t, layer(i, "mlp.up_proj"), ff, d, c.mlpBias());
            if (c.bitnet()) {
                t.put(layer(i, "mlp.ffn_sub_norm.weight"), new long[]{ff});
            }
            linear(t, layer(i, "mlp.down_proj"), d, ff, c.mlpBias());
        }
        t.put(FINAL_NORM, new long[]{d});
        if (!c.tieWordEmbeddings()) {
            t.put(LM_HEAD, new long[]{c.vocabSize(), d});
        }
        return t;
    }

    /** Every tensor of the Hugging Face checkpoint: {@link #expected}, with Phi-3's fused qkv and gate_up in place. */
    public static Map<String, long[]> checkpoint(ModelConfig c) {
        if (!c.architecture().equals("phi3")) {
            return expected(c);
        }
        Map<String, long[]> t = new LinkedHashMap<>();
        long rowsOfQkv = (long) (c.numHeads() + 2 * c.numKvHeads()) * c.headDim();
        expected(c).forEach((name, shape) -> {
            if (name.endsWith("self_attn.q_proj.weight")) {
                t.put(name.replace("q_proj", "qkv_proj"), new long[]{rowsOfQkv, shape[1]});
            } else if (name.endsWith("mlp.gate_proj.weight")) {
                t.put(name.replace("gate_proj", "gate_up_proj"), new long[]{2L * shape[0], shape[1]});
            } else if (!name.endsWith("self_attn.k_proj.weight") && !name.endsWith("self_attn.v_proj.weight")
                    && !name.endsWith("mlp.up_proj.weight")) {
                t.put(name, shape);
            }
        });
        return t;
    }

    /**
     * Where a tensor of {@link #expected} comes from in the checkpoint: rows firstRow.. of tensor {@code name}, with
     * {@code offset} added to each value.
     */
    public record Source(String name, long firstRow, float offset) {
        public Source(String name, long firstRow) {
            this(name, firstRow, 0f);
        }
    }

    /**
     * The source of .zse tensor {@code name}. Phi-3's qkv_proj rows are q, then k, then v, and gate_up_proj's are gate
     * then up. Gemma's RMSNorm multiplies by (1 + w): the 1 is added
     * here, in F32 as transformers adds it, so the engine's RMSNorm serves every family.
     */
    public static Source source(ModelConfig c, String name) {
        if (c.gemma() != null && name.endsWith("norm.weight")) {
            return new Source(name, 0, 1f);
        }
        if (c.architecture().equals("phi3")) {
            long q = (long) c.numHeads() * c.headDim();
            long kv = (long) c.numKvHeads() * c.headDim();
            String qkv = name.replaceFirst("self_attn\\.[qkv]_proj", "self_attn.qkv_proj");
            String gateUp = name.replaceFirst("mlp\\.(gate|up)_proj", "mlp.gate_up_proj");
            if (name.endsWith("self_attn.q_proj.weight")) {
                return new Source(qkv, 0);
            } else if (name.endsWith("self_attn.k_proj.weight")) {
                return new Source(qkv, q);
            } else if (name.endsWith("self_attn.v_proj.weight")) {
                return new Source(qkv, q + kv);
            } else if (name.endsWith("mlp.gate_proj.weight")) {
                return new Source(gateUp, 0);
            } else if (name.endsWith("mlp.up_proj.weight")) {
                return new Source(gateUp, c.intermediateSize());
            }
        }
        return new Source(name, 0);
    }

    /** A linear layer: weight [out, in] and, with a bias, bias [out]. */
    private static void linear(Map<String, long[]> t, String prefix, long out, long in, boolean bias) {
        t.put(prefix + ".weight", new long[]{out, in});
        if (bias) {
            t.put(prefix + ".bias", new long[]{out});
        }
    }
}
