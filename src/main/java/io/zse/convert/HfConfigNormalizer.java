package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.format.HalfFloats;
import io.zse.model.GemmaOptions;
import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Turns a Hugging Face {@code config.json} (plus {@code generation_config.json}) into a {@link ModelConfig}, refusing
 * anything the engine does not implement with a message that names the field.
 */
public final class HfConfigNormalizer {
    private HfConfigNormalizer() {
    }

    private static final Map<String, String> ARCHITECTURES = Map.of(
            "LlamaForCausalLM", "llama",
            "MistralForCausalLM", "mistral",
            "Qwen2ForCausalLM", "qwen2",
            "Qwen3ForCausalLM", "qwen3",
            "Phi3ForCausalLM", "phi3",
            "Gemma2ForCausalLM", "gemma2",
            "Gemma3ForCausalLM", "gemma3",
            "BitNetForCausalLM", "bitnet");

    /**
     * @param config           parsed config.json
     * @param generationConfig parsed generation_config.json, or null when the checkpoint has none
     */
    public static ModelConfig normalize(JsonNode config, JsonNode generationConfig) {
        String architecture = architecture(config);
        int hidden = positiveInt(config, "hidden_size");
        int heads = positiveInt(config, "num_attention_heads");
        int kvHeads = config.hasNonNull("num_key_value_heads") ? positiveInt(config, "num_key_value_heads") : heads;
        if (heads % kvHeads != 0) {
            throw refuse("num_key_value_heads", kvHeads + " does not divide num_attention_heads " + heads);
        }
        int headDim = config.hasNonNull("head_dim") ? positiveInt(config, "head_dim") : hidden / heads;
        boolean gemma = architecture.startsWith("gemma");
        if (gemma) {
            // Gemma's configs name the activation hidden_activation (older ones also carry hidden_act).
            String key = config.hasNonNull("hidden_activation") ? "hidden_activation" : "hidden_act";
            String act = config.path(key).asText("gelu_pytorch_tanh");
            if (!act.equals("gelu_pytorch_tanh")) {
                throw refuse(key, "'" + act + "' is not supported for " + architecture + " (only gelu_pytorch_tanh)");
            }
        } else {
            String wantedAct = architecture.equals("bitnet") ? "relu2" : "silu";
            String act = config.path("hidden_act").asText(wantedAct);
            if (!act.equals(wantedAct)) {
                throw refuse("hidden_act", "'" + act + "' is not supported for " + architecture + " (only " + wantedAct
                        + ")");
            }
        }
        if (architecture.equals("bitnet")) {
            BitNetProjections.of(config); // refuses a quantization_config the engine does not run
        }
        JsonNode rope = config.path("rope_parameters");
        double theta;
        RopeScaling scaling;
        double localTheta = 0;
        if (architecture.equals("gemma3") && rope.has("full_attention")) {
            // transformers 5 writes Gemma 3's RoPE per layer type: the global layers' (scaled) and the local layers'.
            JsonNode global = rope.get("full_attention");
            JsonNode local = rope.path("sliding_attention");
            theta = ropeBase(global, "rope_parameters.full_attention.", "rope_theta", 1_000_000.0);
            scaling = ropeScaling(global, "rope_parameters.full_attention", config, headDim);
            if (local.isObject() && ropeScaling(local, "rope_parameters.sliding_attention", config, headDim) != null) {
                throw refuse("rope_parameters.sliding_attention.rope_type", local.path("rope_type")
                        + " is not supported (local layers use plain RoPE)");
            }
            localTheta = ropeBase(local, "rope_parameters.sliding_attention.", "rope_theta", 10_000.0);
        } else if (rope.isObject()) {
            // transformers 5 writes theta and scaling together in one object.
            theta = ropeBase(rope, "rope_parameters.", "rope_theta", 10000.0);
            scaling = ropeScaling(rope, "rope_parameters", config, headDim);
        } else {
            theta = ropeBase(config, "", "rope_theta", 10000.0);
            scaling = config.path("rope_scaling").isObject()
                    ? ropeScaling(config.get("rope_scaling"), "rope_scaling", config, headDim) : null;
        }
        if (architecture.equals("gemma3") && localTheta == 0) {
            theta = ropeBase(config, "", "rope_theta", 1_000_000.0);
            localTheta = ropeBase(config, "", "rope_local_base_freq", 10_000.0);
        }
        for (JsonNode holder : new JsonNode[]{config, rope}) {
            if (holder.path("partial_rotary_factor").asDouble(1.0) != 1.0) {
                throw refuse("partial_rotary_factor", holder.get("partial_rotary_factor") + " is not supported (only 1)");
            }
        }
        boolean qwen2 = architecture.equals("qwen2");
        Integer window = null;
        if ((architecture.equals("mistral") || architecture.equals("phi3")) && config.hasNonNull("sliding_window")) {
            window = positiveInt(config, "sliding_window");
        }
        boolean qwen = qwen2 || architecture.equals("qwen3");
        if (qwen && config.path("use_sliding_window").asBoolean(false)) {
            throw refuse("use_sliding_window", "true is not supported for " + architecture);
        }
        List<Integer> eos = new ArrayList<>();
        addIds(eos, config.path("eos_token_id"));
        if (generationConfig != null) {
            addIds(eos, generationConfig.path("eos_token_id"));
        }
        // (Integer): with a bare int first the conditional unboxes, and a config without any bos id throws NPE.
        Integer bos = config.hasNonNull("bos_token_id") ? (Integer) config.get("bos_token_id").asInt()
                : generationConfig != null && generationConfig.hasNonNull("bos_token_id")
                ? generationConfig.get("bos_token_id").asInt() : null;
        Integer pad = config.hasNonNull("pad_token_id") ? config.get("pad_token_id").asInt() : null;
        int layers = positiveInt(config, "num_hidden_layers");
        GemmaOptions gemmaOptions = null;
        if (gemma) {
            if (architecture.equals("gemma2") && scaling != null) {
                throw refuse("rope_scaling", "is not supported for gemma2");
            }
            if (config.path("attention_bias").asBoolean(false)) {
                throw refuse("attention_bias", "true is not supported for " + architecture);
            }
            if (config.path("use_bidirectional_attention").asBoolean(false)) {
                throw refuse("use_bidirectional_attention", "true is not supported (causal attention only)");
            }
            window = config.hasNonNull("sliding_window") ? positiveInt(config, "sliding_window") : null;
            gemmaOptions = gemmaOptions(config, architecture, hidden, layers, window,
                    architecture.equals("gemma2") ? theta : localTheta);
        }
        return new ModelConfig(architecture, hidden, layers, heads, kvHeads, headDim,
                positiveInt(config, "intermediate_size"), positiveInt(config, "vocab_size"),
                positiveInt(config, "max_position_embeddings"), theta, scaling,
                ModelConfig.requireNormEps("config.json: rms_norm_eps", config.path("rms_norm_eps").asDouble(1e-6)),
                config.path("tie_word_embeddings").asBoolean(gemma),
                qwen2 || config.path("attention_bias").asBoolean(false), config.path("mlp_bias").asBoolean(false),
                window, bos, eos, pad, gemmaOptions);
    }

    /**
     * Gemma 2/3's options, with transformers' defaults for absent keys: soft caps 50 (attention) and 30 (final) for
     * Gemma 2, none for Gemma 3 (whose attention ignores attn_logit_softcapping in transformers and llama.cpp alike);
     * query_pre_attn_scalar 256; local and global layers from layer_types, else every sliding_window_pattern-th layer
     * global (2 for Gemma 2, 6 for Gemma 3).
     */
    private static GemmaOptions gemmaOptions(JsonNode config, String architecture, int hidden, int layers,
                                             Integer window, double localTheta) {
        boolean gemma2 = architecture.equals("gemma2");
        double attentionCap = gemma2 ? softCap(config, "attn_logit_softcapping", 50.0) : 0;
        double finalCap = softCap(config, "final_logit_softcapping", gemma2 ? 30.0 : 0);
        double queryScalar = config.hasNonNull("query_pre_attn_scalar")
                ? positiveNumber(config, "config", "query_pre_attn_scalar") : 256;
        List<Boolean> sliding = new ArrayList<>();
        JsonNode types = config.path("layer_types");
        if (types.isArray()) {
            if (types.size() != layers) {
                throw refuse("layer_types", "lists " + types.size() + " layers, num_hidden_layers is " + layers);
            }
            for (JsonNode t : types) {
                switch (t.asText()) {
                    case "sliding_attention" -> sliding.add(true);
                    case "full_attention" -> sliding.add(false);
                    default -> throw refuse("layer_types", "holds " + t + " (supported: sliding_attention, "
                            + "full_attention)");
                }
            }
        } else {
            int pattern = gemma2 ? 2 : config.hasNonNull("sliding_window_pattern")
                    ? positiveInt(config, "sliding_window_pattern") : 6;
            for (int i = 0; i < layers; i++) {
                sliding.add((i + 1) % pattern != 0);
            }
        }
        if (window == null && sliding.contains(true)) {
            throw refuse("sliding_window", "is missing, and layer_types has sliding_attention layers");
        }
        return new GemmaOptions(embeddingScale(config, hidden), Math.pow(queryScalar, -0.5), attentionCap, finalCap,
                sliding, localTheta);
    }

    /**
     * sqrt(hidden_size) as transformers multiplies the embeddings by it: a float32 scalar cast to the weights' dtype,
     * so a bfloat16 or float16 checkpoint is scaled by the rounded value it was trained with.
     */
    private static double embeddingScale(JsonNode config, int hidden) {
        float scale = (float) Math.sqrt(hidden);
        String dtype = config.hasNonNull("dtype") ? config.get("dtype").asText() : config.path("torch_dtype").asText("");
        return switch (dtype) {
            case "bfloat16" -> HalfFloats.fromBf16(HalfFloats.toBf16(scale));
            case "float16" -> HalfFloats.roundToF16(scale);
            default -> scale;
        };
    }

    private static double softCap(JsonNode config, String field, double absent) {
        JsonNode n = config.get(field);
        if (n == null) {
            return absent;
        }
        if (n.isNull()) {
            return 0;
        }
        return positiveNumber(config, "config", field);
    }

    private static String architecture(JsonNode config) {
        JsonNode list = config.path("architectures");
        if (list.isArray() && !list.isEmpty()) {
            String name = list.get(0).asText();
            String arch = ARCHITECTURES.get(name);
            if (name.equals("Gemma3ForConditionalGeneration")) {
                throw refuse("architectures", list + " is not supported: the multimodal Gemma 3 (vision tower, "
                        + "text_config) is not converted; its text-only Gemma3ForCausalLM form is");
            }
            if (arch == null || list.size() != 1) {
                throw refuse("architectures", list + " is not supported (supported: LlamaForCausalLM, "
                        + "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, "
                        + "Gemma3ForCausalLM, BitNetForCausalLM)");
            }
            return arch;
        }
        String type = config.path("model_type").asText("");
        if (type.equals("gemma3_text")) {
            return "gemma3";
        }
        if (!ARCHITECTURES.containsValue(type) || type.equals("gemma3")) {
            throw refuse("model_type", "'" + type + "' is not supported (supported: llama, mistral, qwen2, qwen3, phi3, "
                    + "gemma2, gemma3_text, bitnet)");
        }
        return type;
    }

    private static RopeScaling ropeScaling(JsonNode r, String field, JsonNode config, int headDim) {
        String type = r.hasNonNull("rope_type") ? r.get("rope_type").asText() : r.path("type").asText("default");
        return switch (type) {
            case "default" -> null;
            case "linear" -> RopeScaling.linear(positiveNumber(r, field, "factor"));
            case "llama3" -> RopeScaling.llama3(positiveNumber(r, field, "factor"),
                    positiveNumber(r, field, "low_freq_factor"), positiveNumber(r, field, "high_freq_factor"),
                    (int) positiveNumber(r, field, "original_max_position_embeddings"));
            case "longrope", "su" -> longrope(r, field, config, headDim);
            default -> throw refuse(field + ".rope_type", "'" + type + "' is not supported (supported: llama3, linear, "
                    + "longrope)");
        };
    }

    /** Phi-3's LongRoPE: both factor sets (which positions use which: io.zse.model.LongRope). */
    private static RopeScaling longrope(JsonNode r, String field, JsonNode config, int headDim) {
        int original = r.hasNonNull("original_max_position_embeddings")
                ? (int) positiveNumber(r, field, "original_max_position_embeddings")
                : positiveInt(config, "original_max_position_embeddings");
        int context = positiveInt(config, "max_position_embeddings");
        double factor = r.hasNonNull("factor") ? positiveNumber(r, field, "factor") : (double) context / original;
        double attention = r.hasNonNull("attention_factor") ? positiveNumber(r, field, "attention_factor")
                : factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
        return RopeScaling.longrope(attention, factorList(r, field, "short_factor", headDim),
                factorList(r, field, "long_factor", headDim), original);
    }

    private static List<Double> factorList(JsonNode r, String field, String set, int headDim) {
        JsonNode list = r.path(set);
        if (!list.isArray() || list.size() != headDim / 2) {
            throw refuse(field + "." + set, "must list " + headDim / 2 + " numbers (one per rotated pair), not " + list);
        }
        List<Double> factors = new ArrayList<>();
        for (JsonNode n : list) {
            if (!n.isNumber() || n.asDouble() <= 0) {
                throw refuse(field + "." + set, "holds " + n + ", not a positive number");
            }
            factors.add(n.asDouble());
        }
        return factors;
    }

    private static void addIds(List<Integer> ids, JsonNode node) {
        if (node.isIntegralNumber() && !ids.contains(node.asInt())) {
            ids.add(node.asInt());
        } else if (node.isArray()) {
            node.forEach(n -> addIds(ids, n));
        }
    }

    /** {@code key} of {@code holder}, or {@code absent}; {@code path} leads to the holder, for the refusal. */
    private static double ropeBase(JsonNode holder, String path, String key, double absent) {
        return ModelConfig.requireRopeBase("config.json: " + path + key, holder.path(key).asDouble(absent));
    }

    private static int positiveInt(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || n.isNull()) {
            throw refuse(field, "is missing");
        }
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.asInt() <= 0) {
            throw refuse(field, n + " is not a positive integer");
        }
        return n.asInt();
    }

    private static double positiveNumber(JsonNode o, String parent, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isNumber() || n.asDouble() <= 0) {
            throw refuse(parent + "." + field, n == null ? "is missing" : n + " is not a positive number");
        }
        return n.asDouble();
    }

    private static IllegalArgumentException refuse(String field, String problem) {
        return new IllegalArgumentException("config.json: " + field + " " + problem);
    }
}
