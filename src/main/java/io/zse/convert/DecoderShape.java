package io.zse.convert;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The dimensions of a Llama-family decoder (Llama, Qwen2) as read from its config.json, and the Hugging Face
 * tensor names and shapes that follow from them.
 */
public record DecoderShape(int hiddenSize, int intermediateSize, int layers, int heads, int kvHeads, int headDim,
                           int vocabSize, boolean tiedEmbeddings, boolean qkvBias) {

    /** Reads the dimensions from config.json values; head_dim defaults to hidden_size / num_attention_heads. */
    public static DecoderShape fromConfig(Map<String, ?> config) {
        int hidden = intValue(config, "hidden_size");
        int heads = intValue(config, "num_attention_heads");
        int headDim = config.get("head_dim") instanceof Number n ? n.intValue() : hidden / heads;
        boolean qkvBias = "qwen2".equals(config.get("model_type")) || Boolean.TRUE.equals(config.get("attention_bias"));
        return new DecoderShape(hidden, intValue(config, "intermediate_size"), intValue(config, "num_hidden_layers"),
                heads, config.containsKey("num_key_value_heads") ? intValue(config, "num_key_value_heads") : heads,
                headDim, intValue(config, "vocab_size"), Boolean.TRUE.equals(config.get("tie_word_embeddings")), qkvBias);
    }

    private static int intValue(Map<String, ?> config, String key) {
        if (config.get(key) instanceof Number n && n.longValue() > 0 && n.longValue() <= Integer.MAX_VALUE) {
            return n.intValue();
        }
        throw new IllegalArgumentException("config." + key + " must be a positive integer, got " + config.get(key));
    }

    /** Every stored tensor in model order; lm_head.weight is absent when embeddings are tied. */
    public List<TensorInfo> tensors(SafetensorsDtype dtype) {
        List<TensorInfo> t = new ArrayList<>();
        int qRows = heads * headDim;
        int kvRows = kvHeads * headDim;
        t.add(new TensorInfo("model.embed_tokens.weight", dtype, new long[]{vocabSize, hiddenSize}));
        for (int i = 0; i < layers; i++) {
            String p = "model.layers." + i + ".";
            t.add(new TensorInfo(p + "input_layernorm.weight", dtype, new long[]{hiddenSize}));
            addProjection(t, p + "self_attn.q_proj", dtype, qRows, hiddenSize, qkvBias);
            addProjection(t, p + "self_attn.k_proj", dtype, kvRows, hiddenSize, qkvBias);
            addProjection(t, p + "self_attn.v_proj", dtype, kvRows, hiddenSize, qkvBias);
            addProjection(t, p + "self_attn.o_proj", dtype, hiddenSize, qRows, false);
            t.add(new TensorInfo(p + "post_attention_layernorm.weight", dtype, new long[]{hiddenSize}));
            addProjection(t, p + "mlp.gate_proj", dtype, intermediateSize, hiddenSize, false);
            addProjection(t, p + "mlp.up_proj", dtype, intermediateSize, hiddenSize, false);
            addProjection(t, p + "mlp.down_proj", dtype, hiddenSize, intermediateSize, false);
        }
        t.add(new TensorInfo("model.norm.weight", dtype, new long[]{hiddenSize}));
        if (!tiedEmbeddings) {
            t.add(new TensorInfo("lm_head.weight", dtype, new long[]{vocabSize, hiddenSize}));
        }
        return t;
    }

    /** A Linear layer: weight [out, in] (PyTorch layout) and, if asked, bias [out]. */
    private static void addProjection(List<TensorInfo> t, String prefix, SafetensorsDtype dtype, int out, int in,
                                      boolean bias) {
        t.add(new TensorInfo(prefix + ".weight", dtype, new long[]{out, in}));
        if (bias) {
            t.add(new TensorInfo(prefix + ".bias", dtype, new long[]{out}));
        }
    }

    public long parameterCount() {
        return tensors(SafetensorsDtype.F32).stream().mapToLong(TensorInfo::elementCount).sum();
    }
}
