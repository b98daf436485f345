package io.zse.convert.gguf;

import io.zse.model.GemmaOptions;
import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file's hyperparameters ({@code <arch>.*} keys, llama.cpp's names) as a {@link ModelConfig}. Architectures:
 * {@code llama} (Llama and Mistral: llama.cpp's converter writes both as llama), {@code qwen2}, {@code gemma2} and
 * {@code gemma3} (whose norm weights llama.cpp stores as 1 + w, as a .zse holds them). Facts GGUF keeps
 * in tensors rather than keys come from the tensor table: tied embeddings (no {@code output.weight}), attention biases
 * ({@code attn_q.bias}), and Llama 3 RoPE scaling ({@code rope_freqs.weight}, passed in as factors).
 */
final class GgufModelConfig {
    private static final Map<String, String> ARCHITECTURES = Map.of("llama", "llama", "qwen2", "qwen2",
            "gemma2", "gemma2", "gemma3", "gemma3");

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
        int layers = positive(m, arch + ".block_count");
        GemmaOptions gemma = architecture.startsWith("gemma") ? gemma(m, arch, hidden, heads, headDim, layers) : null;
        if (gemma != null && window == null && gemma.slidingLayers().contains(true)) {
            throw new IllegalArgumentException("GGUF " + arch + ".attention.sliding_window is missing");
        }
        if (window != null && !architecture.equals("llama") && gemma == null) {
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
        return new ModelConfig(window != null && gemma == null ? "mistral" : architecture, hidden, layers,
                heads, kvHeads, headDim, positive(m, arch + ".feed_forward_length"), vocab,
                positive(m, arch + ".context_length"), m.number(arch + ".rope.freq_base", 10000.0), scaling,
                m.number(arch + ".attention.layer_norm_rms_epsilon", 1e-5), !hasOutput,
                architecture.equals("qwen2") || hasQkvBias, false, window,
                m.integerOrNull("tokenizer.ggml.bos_token_id"), eos, m.integerOrNull("tokenizer.ggml.padding_token_id"),
                gemma);
    }

    /**
     * Gemma's options as llama.cpp runs a GGUF: embeddings times sqrt(n_embd) in F32; soft caps from their keys;
     * query_pre_attn_scalar is not stored, and llama.cpp uses head_dim except for Gemma 2 27B (46 layers), whose
     * scalar is hidden / heads; local layers from sliding_window_pattern (a period or one flag per layer), else every
     * other layer (Gemma 2) or five in six (Gemma 3); the local RoPE base from rope.freq_base_swa, else 10000.
     */
    private static GemmaOptions gemma(GgufMetadata m, String arch, int hidden, int heads, int headDim, int layers) {
        boolean gemma2 = arch.equals("gemma2");
        double queryScalar = gemma2 && layers == 46 ? (double) hidden / heads : headDim;
        List<Boolean> sliding = new ArrayList<>();
        String patternKey = arch + ".attention.sliding_window_pattern";
        if (m.isArray(patternKey)) {
            sliding.addAll(m.list(patternKey, Boolean.class));
            if (sliding.size() != layers) {
                throw new IllegalArgumentException("GGUF " + patternKey + " has " + sliding.size() + " flags for "
                        + layers + " layers");
            }
        } else {
            int period = m.has(patternKey) ? positive(m, patternKey) : gemma2 ? 2 : 6;
            for (int i = 0; i < layers; i++) {
                sliding.add((i + 1) % period != 0);
            }
        }
        double theta = m.number(arch + ".rope.freq_base", 10000.0);
        return new GemmaOptions((float) Math.sqrt(hidden), Math.pow(queryScalar, -0.5),
                gemma2 ? softCap(m, arch + ".attn_logit_softcapping") : 0, softCap(m, arch + ".final_logit_softcapping"),
                sliding, gemma2 ? theta : m.number(arch + ".rope.freq_base_swa", 10000.0));
    }

    private static double softCap(GgufMetadata m, String key) {
        double cap = m.number(key, 0);
        if (!(cap >= 0) || Double.isInfinite(cap)) {
            throw new IllegalArgumentException("GGUF metadata '" + key + "' is " + cap + ", expected a positive number");
        }
        return cap;
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
