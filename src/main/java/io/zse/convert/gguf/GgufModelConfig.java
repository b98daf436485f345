package io.zse.convert.gguf;

import io.zse.model.GemmaOptions;
import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A GGUF file's hyperparameters ({@code <arch>.*} keys, llama.cpp's names) as a {@link ModelConfig}. Architectures:
 * {@code llama} (Llama and Mistral: llama.cpp's converter writes both as llama), {@code qwen2}, {@code qwen3},
 * {@code phi3}, {@code gemma2} and {@code gemma3} (whose norm weights llama.cpp stores as 1 + w, as a .zse holds them). Facts GGUF
 * keeps in tensors rather than keys come from the tensor table: tied embeddings (no {@code output.weight}), attention
 * biases ({@code attn_q.bias}), Llama 3 RoPE scaling ({@code rope_freqs.weight}, passed in as factors) and Phi-3's
 * LongRoPE ({@code rope_factors_short.weight} and {@code rope_factors_long.weight}).
 */
final class GgufModelConfig {
    private static final Map<String, String> ARCHITECTURES = Map.of("llama", "llama", "qwen2", "qwen2",
            "qwen3", "qwen3", "phi3", "phi3", "gemma2", "gemma2", "gemma3", "gemma3", "bitnet-b1.58", "bitnet");

    private GgufModelConfig() {
    }

    /**
     * @param hasOutput     the file stores {@code output.weight} (else the embeddings are tied)
     * @param hasQkvBias    the file stores {@code blk.0.attn_q.bias}
     * @param ropeFactors   the values of {@code rope_freqs.weight}, or null
     * @param shortFactors  the values of {@code rope_factors_short.weight}, or null
     * @param longFactors   the values of {@code rope_factors_long.weight}, or null
     * @param embeddingRows rows of {@code token_embd.weight} (or of {@code output.weight} when tied)
     */
    static ModelConfig of(GgufMetadata m, boolean hasOutput, boolean hasQkvBias, List<Double> ropeFactors,
                          List<Double> shortFactors, List<Double> longFactors, int embeddingRows) {
        String arch = m.string("general.architecture");
        String architecture = ARCHITECTURES.get(arch);
        if (arch.equals("bitnet")) {
            throw new IllegalArgumentException("GGUF architecture 'bitnet' is llama.cpp's BitnetForCausalLM (1bitLLM), "
                    + "whose feed-forward gates with SiLU, and is not supported: zse runs BitNet b1.58 as "
                    + "transformers' BitNetForCausalLM (relu², GGUF architecture 'bitnet-b1.58')");
        }
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
        if (headDim % 2 != 0) { // RoPE rotates pairs, and llama.cpp's q and k rows are reordered by halves of a head
            throw new IllegalArgumentException("GGUF " + arch + " heads of " + headDim + " dimensions: a head dim must "
                    + "be even");
        }
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
        if (shortFactors != null || longFactors != null) {
            if (!arch.equals("phi3") || scaling != null) {
                throw new IllegalArgumentException("GGUF rope_factors_short/long.weight are supported only for phi3 "
                        + "without other RoPE scaling");
            }
            scaling = longRope(m, arch, shortFactors, longFactors, headDim);
        }
        int vocab = m.has(arch + ".vocab_size") ? positive(m, arch + ".vocab_size") : embeddingRows;
        if (vocab != embeddingRows) {
            throw new IllegalArgumentException("GGUF " + arch + ".vocab_size " + vocab + " differs from the "
                    + embeddingRows + " rows of the embedding tensor");
        }
        Integer window = m.integerOrNull(arch + ".attention.sliding_window");
        if (arch.equals("phi3") && window != null && window == 0) {
            window = null; // llama.cpp writes 0 for a Phi-3 config without sliding_window
        }
        int layers = positive(m, arch + ".block_count");
        GemmaOptions gemma = architecture.startsWith("gemma") ? gemma(m, arch, hidden, heads, headDim, layers) : null;
        if (gemma != null && window == null && gemma.slidingLayers().contains(true)) {
            throw new IllegalArgumentException("GGUF " + arch + ".attention.sliding_window is missing");
        }
        if (window != null && !architecture.equals("llama") && !architecture.equals("phi3") && gemma == null) {
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
        return new ModelConfig(window != null && architecture.equals("llama") ? "mistral" : architecture, hidden, layers,
                heads, kvHeads, headDim, positive(m, arch + ".feed_forward_length"), vocab,
                positive(m, arch + ".context_length"), ropeBase(m, arch + ".rope.freq_base"), scaling,
                normEps(m, arch + ".attention.layer_norm_rms_epsilon"), !hasOutput,
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
        double theta = ropeBase(m, arch + ".rope.freq_base");
        return new GemmaOptions((float) Math.sqrt(hidden), Math.pow(queryScalar, -0.5),
                gemma2 ? softCap(m, arch + ".attn_logit_softcapping") : 0, softCap(m, arch + ".final_logit_softcapping"),
                sliding, gemma2 ? theta : ropeBase(m, arch + ".rope.freq_base_swa"));
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
            checkFactors("rope_freqs.weight", factors, headDim);
            return RopeScaling.factors(factors);
        }
        return scaling;
    }

    /**
     * Phi-3's LongRoPE as llama.cpp stores it: both factor sets as tensors, the original context in
     * rope.scaling.original_context_length, and the attention factor, which llama.cpp's converter computes as
     * transformers does, sqrt(1 + ln(s) / ln(original)) for s = context / original > 1. That value is taken in double
     * precision where the stored F32 key agrees with it, so the config equals the one imported from safetensors.
     */
    private static RopeScaling longRope(GgufMetadata m, String arch, List<Double> shortFactors,
                                        List<Double> longFactors, int headDim) {
        if (shortFactors == null || longFactors == null) {
            throw new IllegalArgumentException("GGUF has only one of rope_factors_short.weight and "
                    + "rope_factors_long.weight (LongRoPE needs both)");
        }
        checkFactors("rope_factors_short.weight", shortFactors, headDim);
        checkFactors("rope_factors_long.weight", longFactors, headDim);
        shortFactors = shortestDecimals(shortFactors);
        longFactors = shortestDecimals(longFactors);
        int original = positive(m, arch + ".rope.scaling.original_context_length");
        double scale = (double) positive(m, arch + ".context_length") / original;
        double attention = scale <= 1 ? 1 : Math.sqrt(1 + Math.log(scale) / Math.log(original));
        String key = arch + ".rope.scaling.attn_factor";
        if (m.has(key) && (float) m.number(key, 1) != (float) attention) {
            attention = m.number(key, 1);
            if (!(attention > 0) || Double.isInfinite(attention)) {
                throw new IllegalArgumentException("GGUF metadata '" + key + "' is " + attention
                        + ", expected a positive number");
            }
        }
        return RopeScaling.longrope(attention, shortFactors, longFactors, original);
    }

    /**
     * Each F32 value as the shortest decimal that reads back as it (1.02f as 1.02): the number config.json held before
     * llama.cpp rounded it to F32, and transformers rounds it to the same float32 again when it builds inv_freq.
     */
    private static List<Double> shortestDecimals(List<Double> factors) {
        return factors.stream().map(f -> Double.parseDouble(Float.toString(f.floatValue()))).toList();
    }

    private static void checkFactors(String tensor, List<Double> factors, int headDim) {
        if (factors.size() != headDim / 2) {
            throw new IllegalArgumentException("GGUF " + tensor + " has " + factors.size() + " values for a head of "
                    + headDim + " (expected " + headDim / 2 + ")");
        }
        for (double f : factors) {
            if (!(f > 0) || Double.isInfinite(f)) {
                throw new IllegalArgumentException("GGUF " + tensor + " holds " + f + " (factors must be positive)");
            }
        }
    }

    /** A RoPE base key; llama.cpp's default where absent. */
    private static double ropeBase(GgufMetadata m, String key) {
        return ModelConfig.requireRopeBase("GGUF metadata '" + key + "'", m.number(key, 10000.0));
    }

    /** A norm epsilon key; llama.cpp's default where absent. */
    private static double normEps(GgufMetadata m, String key) {
        return ModelConfig.requireNormEps("GGUF metadata '" + key + "'", m.number(key, 1e-5));
    }

    private static int positive(GgufMetadata m, String key) {
        int v = m.integer(key);
        if (v <= 0) {
            throw new IllegalArgumentException("GGUF metadata '" + key + "' is " + v + ", expected a positive integer");
        }
        return v;
    }
}
