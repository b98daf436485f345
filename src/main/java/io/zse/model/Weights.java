package io.zse.model;

import io.zse.backend.Backend;
import io.zse.backend.WeightMatrix;
import io.zse.format.TensorDecoder;
import io.zse.format.ZseFile;
import io.zse.format.ZseTensor;

import java.util.ArrayList;
import java.util.List;

/**
 * Every tensor of a Llama-family decoder, by role. Matrices are backend views (on the CPU, slices of the mapped file);
 * norm weights and biases are small and decoded to F32. d = hiddenSize, q = numHeads·headDim,
 * kv = numKvHeads·headDim, ff = intermediateSize.
 *
 * @param embeddings     [vocab, d]
 * @param layers         one per decoder block
 * @param finalNorm      [d]
 * @param outputProjection [vocab, d]: lm_head, or the embeddings when tied
 */
public record Weights(WeightMatrix embeddings, List<Layer> layers, float[] finalNorm, WeightMatrix outputProjection) {

    /**
     * One decoder block.
     *
     * @param attentionNorm [d]  input_layernorm
     * @param query         [q, d]
     * @param key           [kv, d]
     * @param value         [kv, d]
     * @param queryBias     [q] or null (Qwen2 / attention_bias)
     * @param keyBias       [kv] or null
     * @param valueBias     [kv] or null
     * @param queryNorm     [headDim] or null: RMSNorm of each query head before RoPE (Qwen3)
     * @param keyNorm       [headDim] or null: the same for each key head
     * @param output        [d, q]  o_proj
     * @param outputBias    [d] or null (Llama attention_bias)
     * @param postAttentionNorm [d] or null: Gemma's norm of the attention output (its post_attention_layernorm)
     * @param ffnNorm       [d]  post_attention_layernorm (Gemma: pre_feedforward_layernorm)
     * @param gate          [ff, d]
     * @param up            [ff, d]
     * @param down          [d, ff]
     * @param postFfnNorm   [d] or null: Gemma's norm of the feed-forward output (post_feedforward_layernorm)
     * @param attentionSubNorm [d] or null: RMSNorm of the attention output before o_proj (BitNet)
     * @param ffnSubNorm    [ff] or null: RMSNorm of the gated activations before down_proj (BitNet)
     */
    public record Layer(float[] attentionNorm, WeightMatrix query, WeightMatrix key, WeightMatrix value,
                        float[] queryBias, float[] keyBias, float[] valueBias, float[] queryNorm, float[] keyNorm,
                        WeightMatrix output, float[] outputBias, float[] postAttentionNorm,
                        float[] ffnNorm, WeightMatrix gate, WeightMatrix up, WeightMatrix down, float[] postFfnNorm,
                        float[] attentionSubNorm, float[] ffnSubNorm) {
    }

    /** Views every tensor the config implies; a missing tensor is an {@link IllegalArgumentException} naming it. */
    public static Weights load(ZseFile file, ModelConfig config, Backend backend) {
        if (config.mlpBias()) {
            throw new IllegalArgumentException(file.path() + ": mlp_bias is not supported");
        }
        // The matrices (the 2-D tensors) in file order, which is the order a forward pass reads them and they are
        // asked for below: a device backend uploads them in this order, and the first token waits only for what it
        // has reached.
        backend.expectWeights(ModelTensors.expected(config).entrySet().stream()
                .filter(e -> e.getValue().length == 2)
                .map(e -> file.tensor(e.getKey()))
                .toList());
        WeightMatrix embeddings = backend.weight(file.tensor(ModelTensors.EMBEDDINGS));
        List<Layer> layers = new ArrayList<>(config.numLayers());
        boolean gemma = config.gemma() != null;
        for (int i = 0; i < config.numLayers(); i++) {
            String p = ModelTensors.layer(i, "");
            layers.add(new Layer(
                    vector(file, p + "input_layernorm.weight"),
                    backend.weight(file.tensor(p + "self_attn.q_proj.weight")),
                    backend.weight(file.tensor(p + "self_attn.k_proj.weight")),
                    backend.weight(file.tensor(p + "self_attn.v_proj.weight")),
                    optionalVector(file, p + "self_attn.q_proj.bias"),
                    optionalVector(file, p + "self_attn.k_proj.bias"),
                    optionalVector(file, p + "self_attn.v_proj.bias"),
                    config.queryKeyNorm() ? vector(file, p + "self_attn.q_norm.weight") : null,
                    config.queryKeyNorm() ? vector(file, p + "self_attn.k_norm.weight") : null,
                    backend.weight(file.tensor(p + "self_attn.o_proj.weight")),
                    optionalVector(file, p + "self_attn.o_proj.bias"),
                    gemma ? vector(file, p + "post_attention_layernorm.weight") : null,
                    vector(file, p + (gemma ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight")),
                    backend.weight(file.tensor(p + "mlp.gate_proj.weight")),
                    backend.weight(file.tensor(p + "mlp.up_proj.weight")),
                    backend.weight(file.tensor(p + "mlp.down_proj.weight")),
                    gemma ? vector(file, p + "post_feedforward_layernorm.weight") : null,
                    config.bitnet() ? vector(file, p + "self_attn.attn_sub_norm.weight") : null,
                    config.bitnet() ? vector(file, p + "mlp.ffn_sub_norm.weight") : null));
        }
        WeightMatrix output = config.tieWordEmbeddings() ? embeddings : backend.weight(file.tensor(ModelTensors.LM_HEAD));
        return new Weights(embeddings, List.copyOf(layers), vector(file, ModelTensors.FINAL_NORM), output);
    }

    private static float[] vector(ZseFile file, String name) {
        ZseTensor t = file.tensor(name);
        long count = t.info().elementCount();
        float[] out = new float[Math.toIntExact(count)];
        TensorDecoder.decode(t.type(), t.groupSize(), t.data(), t.scales(), 0, out.length, out, 0);
        return out;
    }

    private static float[] optionalVector(ZseFile file, String name) {
        return file.hasTensor(name) ? vector(file, name) : null;
    }
}
