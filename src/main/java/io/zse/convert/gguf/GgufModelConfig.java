package io.zse.convert.gguf;

import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file's hyperparameters ({@code <arch>.*} keys, llama.cpp's names) as a {@link ModelConfig}. Architectures:
 * {@code llama} (Llama and Mistral: llama.cpp's converter writes both as llama) and {@code qwen2}. Facts GGUF keeps
 * in tensors rather than keys come from the tensor table: tied embeddings (no {@code output.weight}), attention biases
 * ({@code attn_q.bias}), and Llama 3 RoPE scaling ({@code rope_freqs.weight}, passed in as factors).
 */
final class GgufModelConfig {
    private static final Map<String, String> ARCHITECTURES = Map.of("llama", "llama", "qwen2", "qwen2");

    private GgufModelConfig() {
    }

    /**
     * @param hasOutput     the file stores {@code output.weight} (else the embeddings are tied)
     * @param hasQkvBias    the file stores {@code blk.0.attn_q.bias}
     * @param ropeFactors   the values of {@code rope_freqs.weight}, or null
     * @param embeddingRows rows of {@code token_embd.weight} (or of {@code output.weight} when tied)
     */
    static ModelConfig of(GgufMetadata m, boolean hasOutput, boolean hasQkvBias, List<Double> ropeFactors,
                          int embeddingRows) {
        String arch = m.string("general.architecture");
        String architecture = ARCHITECTURES.get(arch);
        if (architecture == null) {
            throw new IllegalArgumentException("GGUF architecture '" + arch + "' is not supported (supported: "
                    + String.join(", ", ARCHITECTURES.keySet().stream().sorted().toList()) + ")");
        }
        int hidden = positive(m, arch + ".embedding_length");
        int heads = positive(m, arch + ".attention.head_count");
        int kvHeads = m.has(arch + ".attention.head_count_kv") ? positive(m, arch + ".attention.head_count_kv") : heads;
        if (heads % kvHeads != 0) {
            throw new IllegalArgumentException("GGUF " + arch + ".attention.head_count_kv " + kvHeads
                    + " does not divide head_count " + heads);
        }
        int headDim = m.has(arch + ".attention.key_length") ? positive(m, arch + ".attention.key_length") : hidden / heads;
        if (m.has(arch + ".attention.value_length") && m.integer(arch + ".attention.value_length") != headDim) {
            throw new IllegalArgumentException("GGUF " + arch + ".attention.value_length differs from key_length "
                    + headDim + " (not supported)");
        }
        if (m.has(arch + ".rope.dimension_count") && m.integer(arch + ".rope.dimension_count") != headDim) {
            throw new IllegalArgumentException("GGUF " + arch + ".rope.dimension_count "
                    + m.integer(arch + ".rope.dimension_count") + " rotates part of a head of " + headDim
                    + " (partial rotary embeddings are not supported)");
        }
        if (m.has(arch + ".expert_count") && m.integer(arch + ".expert_count") > 0) {
            throw new IllegalArgumentException("GGUF " + arch + ".expert_count " + m.integer(arch + ".expert_count")
                    + ": mixture-of-experts models are not supported");
        }
        RopeScaling scaling = ropeScaling(m, arch, ropeFactors, headDim);
        int vocab = m.has(arch + ".vocab_size") ? positive(m, arch + ".vocab_size") : embeddingRows;
        if (vocab != embeddingRows) {
            throw new IllegalArgumentException("GGUF " + arch + ".vocab_size " + vocab + " differs from the "
                    + embeddingRows + " rows of the embedding tensor");
        }
        Integer window = m.integerOrNull(arch + ".attention.sliding_window");
        if (window != null && !architecture.equals("llama")) {
            throw new IllegalArgumentException("GGUF " + arch + ".attention.sliding_window is not supported for " + arch);
        }
        List<Integer> eos = new ArrayList<>();
        for (String key : List.of("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                "tokenizer.ggml.eom_token_id")) {
            Integer id = m.integerOrNull(key);
            if (id != null && !eos.contains(id)) {
                eos.add(id);
            }
        }
        return new ModelConfig(window != null ? "mistral" : architecture, hidden, positive(m, arch + ".block_count"),
                heads, kvHeads, headDim, positive(m, arch + ".feed_forward_length"), vocab,
                positive(m, arch + ".context_length"), m.number(arch + ".rope.freq_base", 10000.0), scaling,
                m.number(arch + ".attention.layer_norm_rms_epsilon", 1e-5), !hasOutput,
                architecture.equals("qwen2") || hasQkvBias, false, window,
                m.integerOrNull("tokenizer.ggml.bos_token_id"), eos, m.integerOrNull("tokenizer.ggml.padding_token_id"));
    }

    private static RopeScaling ropeScaling(GgufMetadata m, String arch, List<Double> factors, int headDim) {
        String type = m.string(arch + ".rope.scaling.type", "none");
        RopeScaling scaling = switch (type) {
            case "none" -> null;
            case "linear" -> {
                double factor = m.number(arch + ".rope.scaling.factor", 1);
                yield factor == 1 ? null : RopeScaling.linear(factor);
            }
            default -> throw new IllegalArgumentException("GGUF " + arch + ".rope.scaling.type '" + type
                    + "' is not supported (supported: none, linear)");
        };
        if (factors != null) {
            if (scaling != null) {
                throw new IllegalArgumentException("GGUF file has both rope_freqs.weight and "
                        + arch + ".rope.scaling.type " + type + " (not supported)");
            }
            if (factors.size() != headDim / 2) {
                throw new IllegalArgumentException("GGUF rope_freqs.weight has " + factors.size()
                        + " values for a head of " + headDim + " (expected " + headDim / 2 + ")");
            }
            for (double f : factors) {
                if (!(f > 0) || Double.isInfinite(f)) {
                    throw new IllegalArgumentException("GGUF rope_freqs.weight holds " + f + " (factors must be positive)");
                }
            }
            return RopeScaling.factors(factors);
        }
        return scaling;
    }

    private static int positive(GgufMetadata m, String key) {
        int v = m.integer(key);
        if (v <= 0) {
            throw new IllegalArgumentException("GGUF metadata '" + key + "' is " + v + ", expected a positive integer");
        }
        return v;
    }
}
