package io.zse.convert;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Real models whose shape {@code zse synth} can reproduce. Each preset holds the model's published Hugging Face
 * config.json values (base, not instruct, models) and the name of the shared tokenizer folder with the same vocabulary.
 */
public enum ModelPreset {
    /** meta-llama/Llama-3.2-1B. */
    LLAMA_3_2_1B("llama-3.2-1b", "llama3_1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            llama(c, 2048, 8192, 16, 32, 8, 128256, 131072, 500000.0, 1e-5, true);
            c.put("head_dim", 64);
            c.put("rope_scaling", ordered("factor", 32.0, "high_freq_factor", 4.0, "low_freq_factor", 1.0,
                    "original_max_position_embeddings", 8192, "rope_type", "llama3"));
            c.put("bos_token_id", 128000);
            c.put("eos_token_id", 128001);
            return c;
        }
    },
    /** Qwen/Qwen2.5-0.5B; Qwen2 always has q/k/v biases (no attention_bias key in its config). */
    QWEN2_5_0_5B("qwen2.5-0.5b", "qwen3") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            c.put("architectures", new String[]{"Qwen2ForCausalLM"});
            c.put("attention_dropout", 0.0);
            c.put("bos_token_id", 151643);
            c.put("eos_token_id", 151643);
            c.put("hidden_act", "silu");
            c.put("hidden_size", 896);
            c.put("initializer_range", 0.02);
            c.put("intermediate_size", 4864);
            c.put("max_position_embeddings", 32768);
            c.put("max_window_layers", 24);
            c.put("model_type", "qwen2");
            c.put("num_attention_heads", 14);
            c.put("num_hidden_layers", 24);
            c.put("num_key_value_heads", 2);
            c.put("rms_norm_eps", 1e-6);
            c.put("rope_theta", 1000000.0);
            c.put("sliding_window", 32768);
            c.put("tie_word_embeddings", true);
            c.put("use_cache", true);
            c.put("use_sliding_window", false);
            c.put("vocab_size", 151936);
            return c;
        }
    },
    /** Qwen/Qwen3-0.6B-Base: no biases, q/k RMSNorm per head, head_dim 128 wider than hidden / heads. */
    QWEN3_0_6B("qwen3-0.6b", "qwen3") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            c.put("architectures", new String[]{"Qwen3ForCausalLM"});
            c.put("attention_bias", false);
            c.put("attention_dropout", 0.0);
            c.put("bos_token_id", 151643);
            c.put("eos_token_id", 151643);
            c.put("head_dim", 128);
            c.put("hidden_act", "silu");
            c.put("hidden_size", 1024);
            c.put("initializer_range", 0.02);
            c.put("intermediate_size", 3072);
            c.put("max_position_embeddings", 32768);
            c.put("max_window_layers", 28);
            c.put("model_type", "qwen3");
            c.put("num_attention_heads", 16);
            c.put("num_hidden_layers", 28);
            c.put("num_key_value_heads", 8);
            c.put("rms_norm_eps", 1e-6);
            c.put("rope_theta", 1000000.0);
            c.put("sliding_window", null);
            c.put("tie_word_embeddings", true);
            c.put("use_cache", true);
            c.put("use_sliding_window", false);
            c.put("vocab_size", 151936);
            return c;
        }
    },
    /** microsoft/Phi-3-mini-4k-instruct (no base model is published): fused qkv and gate_up, sliding window 2047. */
    PHI_3_MINI_4K("phi-3-mini-4k", "mistral-7b-v0.1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            llama(c, 3072, 8192, 32, 32, 32, 32064, 4096, 10000.0, 1e-5, false);
            c.remove("mlp_bias");
            c.remove("pretraining_tp");
            c.put("architectures", new String[]{"Phi3ForCausalLM"});
            c.put("model_type", "phi3");
            c.put("original_max_position_embeddings", 4096);
            c.put("rope_scaling", null);
            c.put("sliding_window", 2047);
            c.put("bos_token_id", 1);
            c.put("eos_token_id", 32000);
            c.put("pad_token_id", 32000);
            return c;
        }
    },
    /**
     * google/gemma-2-2b: GeGLU, soft caps 50 / 30, local (window 4096) and global layers alternating, head_dim 256.
     * Bos/eos/pad are the shared Mistral tokenizer's (Gemma's own tokenizer is not in the repository).
     */
    GEMMA_2_2B("gemma-2-2b", "mistral-7b-v0.1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            gemma(c, "Gemma2ForCausalLM", "gemma2", 2304, 9216, 26, 8, 4, 256000, 8192, 4096);
            c.put("attn_logit_softcapping", 50.0);
            c.put("final_logit_softcapping", 30.0);
            c.put("rope_theta", 10000.0);
            return c;
        }
    },
    /**
     * google/gemma-3-1b-pt: q/k norms, five local layers (window 512, RoPE base 10000) to each global one (base 1e6),
     * one kv head of 256. Bos/eos/pad as {@link #GEMMA_2_2B}.
     */
    GEMMA_3_1B("gemma-3-1b", "mistral-7b-v0.1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            gemma(c, "Gemma3ForCausalLM", "gemma3_text", 1152, 6912, 26, 4, 1, 262144, 32768, 512);
            c.put("attn_logit_softcapping", null);
            c.put("final_logit_softcapping", null);
            c.put("rope_local_base_freq", 10000.0);
            c.put("rope_scaling", null);
            c.put("rope_theta", 1000000.0);
            c.put("sliding_window_pattern", 6);
            return c;
        }
    },
    /** TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T (same shape as TinyLlama-1.1B-Chat-v1.0). */
    TINYLLAMA_1_1B("tinyllama-1.1b", "mistral-7b-v0.1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            llama(c, 2048, 5632, 22, 32, 4, 32000, 2048, 10000.0, 1e-5, false);
            c.put("rope_scaling", null);
            c.put("bos_token_id", 1);
            c.put("eos_token_id", 2);
            return c;
        }
    },
    /**
     * microsoft/bitnet-b1.58-2B-4T: packed ternary projections (transformers' bitlinear, offline) with relu² and the
     * sub-norms, tied embeddings, Llama 3 tokenizer.
     */
    BITNET_B1_58_2B_4T("bitnet-b1.58-2b-4t", "llama3_1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            c.put("architectures", new String[]{"BitNetForCausalLM"});
            c.put("attention_bias", false);
            c.put("attention_dropout", 0.0);
            c.put("bos_token_id", 128000);
            c.put("eos_token_id", 128001);
            c.put("hidden_act", "relu2");
            c.put("hidden_size", 2560);
            c.put("initializer_range", 0.02);
            c.put("intermediate_size", 6912);
            c.put("max_position_embeddings", 4096);
            c.put("model_type", "bitnet");
            c.put("num_attention_heads", 20);
            c.put("num_hidden_layers", 30);
            c.put("num_key_value_heads", 5);
            c.put("rms_norm_eps", 1e-5);
            c.put("rope_theta", 500000.0);
            c.put("tie_word_embeddings", true);
            c.put("use_cache", true);
            c.put("vocab_size", 128256);
            c.put("quantization_config", ordered("linear_class", "bitlinear", "quant_method", "bitnet",
                    "quantization_mode", "offline"));
            return c;
        }
    },
    /** meta-llama/Meta-Llama-3-8B. */
    LLAMA_3_8B("llama-3-8b", "llama3_1") {
        @Override
        Map<String, Object> values(Map<String, Object> c) {
            llama(c, 4096, 14336, 32, 32, 8, 128256, 8192, 500000.0, 1e-5, false);
            c.put("bos_token_id", 128000);
            c.put("eos_token_id", 128001);
            return c;
        }
    };

    private final String id;
    private final String tokenizerFolder;

    ModelPreset(String id, String tokenizerFolder) {
        this.id = id;
        this.tokenizerFolder = tokenizerFolder;
    }

    /** The name used on the command line, e.g. "llama-3.2-1b". */
    public String id() {
        return id;
    }

    /** Folder under shared/tokenizers holding a tokenizer with this model's vocabulary. */
    public String tokenizerFolder() {
        return tokenizerFolder;
    }

    /** A fresh, mutable copy of the model's config.json (torch_dtype "bfloat16", as published). */
    public Map<String, Object> config() {
        Map<String, Object> c = values(new LinkedHashMap<>());
        c.put("torch_dtype", "bfloat16");
        return c;
    }

    abstract Map<String, Object> values(Map<String, Object> config);

    public static ModelPreset byId(String id) {
        return Arrays.stream(values()).filter(p -> p.id.equalsIgnoreCase(id)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("unknown preset '" + id + "' (known: "
                        + Arrays.stream(values()).map(ModelPreset::id).collect(Collectors.joining(", ")) + ")"));
    }

    /** The keys every LlamaForCausalLM config of these models shares. */
    private static void llama(Map<String, Object> c, int hidden, int intermediate, int layers, int heads, int kvHeads,
                              int vocab, int maxPositions, double ropeTheta, double rmsNormEps, boolean tied) {
        c.put("architectures", new String[]{"LlamaForCausalLM"});
        c.put("attention_bias", false);
        c.put("attention_dropout", 0.0);
        c.put("hidden_act", "silu");
        c.put("hidden_size", hidden);
        c.put("initializer_range", 0.02);
        c.put("intermediate_size", intermediate);
        c.put("max_position_embeddings", maxPositions);
        c.put("mlp_bias", false);
        c.put("model_type", "llama");
        c.put("num_attention_heads", heads);
        c.put("num_hidden_layers", layers);
        c.put("num_key_value_heads", kvHeads);
        c.put("pretraining_tp", 1);
        c.put("rms_norm_eps", rmsNormEps);
        c.put("rope_theta", ropeTheta);
        c.put("tie_word_embeddings", tied);
        c.put("use_cache", true);
        c.put("vocab_size", vocab);
    }

    /** The keys Gemma 2 and Gemma 3 configs share. */
    private static void gemma(Map<String, Object> c, String architecture, String modelType, int hidden,
                              int intermediate, int layers, int heads, int kvHeads, int vocab, int maxPositions,
                              int slidingWindow) {
        c.put("architectures", new String[]{architecture});
        c.put("attention_bias", false);
        c.put("attention_dropout", 0.0);
        c.put("bos_token_id", 1);
        c.put("eos_token_id", 2);
        c.put("head_dim", 256);
        c.put("hidden_activation", "gelu_pytorch_tanh");
        c.put("hidden_size", hidden);
        c.put("initializer_range", 0.02);
        c.put("intermediate_size", intermediate);
        c.put("max_position_embeddings", maxPositions);
        c.put("model_type", modelType);
        c.put("num_attention_heads", heads);
        c.put("num_hidden_layers", layers);
        c.put("num_key_value_heads", kvHeads);
        c.put("pad_token_id", 0);
        c.put("query_pre_attn_scalar", 256);
        c.put("rms_norm_eps", 1e-6);
        c.put("sliding_window", slidingWindow);
        c.put("use_cache", true);
        c.put("vocab_size", vocab);
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
