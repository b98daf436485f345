package io.zse.model;

import java.util.LinkedHashMap;
import java.util.Map;

/** The tensors a Llama-family checkpoint holds, by Hugging Face name, with the shape the config implies. */
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
            linear(t, layer(i, "self_attn.o_proj"), d, q, c.attentionBias() && c.architecture().equals("llama"));
            t.put(layer(i, "post_attention_layernorm.weight"), new long[]{d});
            linear(t, layer(i, "mlp.gate_proj"), ff, d, c.mlpBias());
            linear(t, layer(i, "mlp.up_proj"), ff, d, c.mlpBias());
            linear(t, layer(i, "mlp.down_proj"), d, ff, c.mlpBias());
        }
        t.put(FINAL_NORM, new long[]{d});
        if (!c.tieWordEmbeddings()) {
            t.put(LM_HEAD, new long[]{c.vocabSize(), d});
        }
        return t;
    }

    /** A linear layer: weight [out, in] and, with a bias, bias [out]. */
    private static void linear(Map<String, long[]> t, String prefix, long out, long in, boolean bias) {
        t.put(prefix + ".weight", new long[]{out, in});
        if (bias) {
            t.put(prefix + ".bias", new long[]{out});
        }
    }
}
