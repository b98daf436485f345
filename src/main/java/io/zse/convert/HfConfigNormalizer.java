package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
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
        JsonFields c = new JsonFields(config, "config.json", "");
        String architecture = architecture(config, c);
        int hidden = c.positiveInt("hidden_size");
        int heads = c.positiveInt("num_attention_heads");
        int kvHeads = c.has("num_key_value_heads") ? c.positiveInt("num_key_value_heads") : heads;
        if (heads % kvHeads != 0) {
            throw refuse("num_key_value_heads", kvHeads + " does not divide num_attention_heads " + heads);
        }
        int headDim = c.has("head_dim") ? c.positiveInt("head_dim") : hidden / heads;
        boolean gemma = architecture.startsWith("gemma");
        if (gemma) {
            // Gemma's configs name the activation hidden_activation (older ones also carry hidden_act).
            String key = c.has("hidden_activation") ? "hidden_activation" : "hidden_act";
            String act = c.text(key, "gelu_pytorch_tanh");
            if (!act.equals("gelu_pytorch_tanh")) {
                throw refuse(key, "'" + act + "' is not supported for " + architecture + " (only gelu_pytorch_tanh)");
            }
        } else {
            String wantedAct = architecture.equals("bitnet") ? "relu2" : "silu";
            String act = c.text("hidden_act", wantedAct);
            if (!act.equals(wantedAct)) {
                throw refuse("hidden_act", "'" + act + "' is not supported for " + architecture + " (only " + wantedAct
                        + ")");
            }
        }
        if (architecture.equals("bitnet")) {
            BitNetProjections.of(config); // refuses a quantization_config the engine does not run
        }
        JsonFields rope = c.fields("rope_parameters");
        double theta;
        RopeScaling scaling;
        double localTheta = 0;
        if (architecture.equals("gemma3") && rope.has("full_attention")) {
            // transformers 5 writes Gemma 3's RoPE per layer type: the global layers' (scaled) and the local layers'.
            JsonFields global = rope.fields("full_attention");
            JsonFields local = rope.fields("sliding_attention");
            theta = ropeBase(global, "rope_theta", 1_000_000.0);
            scaling = ropeScaling(global, c, headDim);
            if (ropeScaling(local, c, headDim) != null) {
                throw local.refuse("rope_type", "'" + local.text("rope_type", "")
                        + "' is not supported (local layers use plain RoPE)");
            }
            localTheta = ropeBase(local, "rope_theta", 10_000.0);
        } else if (c.has("rope_parameters")) {
            // transformers 5 writes theta and scaling together in one object.
            theta = ropeBase(rope, "rope_theta", 10000.0);
            scaling = ropeScaling(rope, c, headDim);
        } else {
            theta = ropeBase(c, "rope_theta", 10000.0);
            scaling = c.has("rope_scaling") ? ropeScaling(c.fields("rope_scaling"), c, headDim) : null;
        }
        if (architecture.equals("gemma3") && localTheta == 0) {
            theta = ropeBase(c, "rope_theta", 1_000_000.0);
            localTheta = ropeBase(c, "rope_local_base_freq", 10_000.0);
        }
        for (JsonFields holder : List.of(c, rope)) {
            double factor = holder.number("partial_rotary_factor", 1.0);
            if (factor != 1.0) {
                throw refuse("partial_rotary_factor", factor + " is not supported (only 1)");
            }
        }
        boolean qwen2 = architecture.equals("qwen2");
        Integer window = null;
        if ((architecture.equals("mistral") || architecture.equals("phi3")) && c.has("sliding_window")) {
            window = c.positiveInt("sliding_window");
        }
        boolean qwen = qwen2 || architecture.equals("qwen3");
        if (qwen && c.bool("use_sliding_window", false)) {
            throw refuse("use_sliding_window", "true is not supported for " + architecture);
        }
        JsonFields generation = new JsonFields(generationConfig == null ? MissingNode.getInstance() : generationConfig,
                "generation_config.json", "");
        int vocab = c.positiveInt("vocab_size");
        List<Integer> eos = new ArrayList<>();
        for (JsonFields holder : List.of(c, generation)) {
            List<Integer> ids = holder.intOrInts("eos_token_id");
            requireInVocabulary(holder, "eos_token_id", ids, vocab);
            ids.stream().filter(id -> !eos.contains(id)).forEach(eos::add);
        }
        JsonFields bosHolder = c.has("bos_token_id") ? c : generation;
        Integer bos = bosHolder.optionalInt("bos_token_id");
        if (bos != null) {
            requireInVocabulary(bosHolder, "bos_token_id", List.of(bos), vocab);
        }
        Integer pad = c.optionalInt("pad_token_id");
        int layers = c.positiveInt("num_hidden_layers");
        GemmaOptions gemmaOptions = null;
        if (gemma) {
            if (architecture.equals("gemma2") && scaling != null) {
                throw refuse("rope_scaling", "is not supported for gemma2");
            }
            if (c.bool("attention_bias", false)) {
                throw refuse("attention_bias", "true is not supported for " + architecture);
            }
            if (c.bool("use_bidirectional_attention", false)) {
                throw refuse("use_bidirectional_attention", "true is not supported (causal attention only)");
            }
            window = c.has("sliding_window") ? c.positiveInt("sliding_window") : null;
            gemmaOptions = gemmaOptions(c, architecture, hidden, layers, window,
                    architecture.equals("gemma2") ? theta : localTheta);
        }
        return new ModelConfig(architecture, hidden, layers, heads, kvHeads, headDim,
                c.positiveInt("intermediate_size"), vocab,
                c.positiveInt("max_position_embeddings"), theta, scaling,
                ModelConfig.requireNormEps("config.json: rms_norm_eps", c.number("rms_norm_eps", 1e-6)),
                c.bool("tie_word_embeddings", gemma),
                qwen2 || c.bool("attention_bias", false), c.bool("mlp_bias", false),
                window, bos, eos, pad, gemmaOptions);
    }

    /**
     * Gemma 2/3's options, with transformers' defaults for absent keys: soft caps 50 (attention) and 30 (final) for
     * Gemma 2, none for Gemma 3 (whose attention ignores attn_logit_softcapping in transformers and llama.cpp alike);
     * query_pre_attn_scalar 256; local and global layers from layer_types, else every sliding_window_pattern-th layer
     * global (2 for Gemma 2, 6 for Gemma 3).
     */
    private static GemmaOptions gemmaOptions(JsonFields config, String architecture, int hidden, int layers,
                                             Integer window, double localTheta) {
        boolean gemma2 = architecture.equals("gemma2");
        double attentionCap = gemma2 ? softCap(config, "attn_logit_softcapping", 50.0) : 0;
        double finalCap = softCap(config, "final_logit_softcapping", gemma2 ? 30.0 : 0);
        double queryScalar = config.has("query_pre_attn_scalar") ? config.positiveNumber("query_pre_attn_scalar") : 256;
        List<Boolean> sliding = new ArrayList<>();
        if (config.has("layer_types")) {
            JsonNode types = config.list("layer_types");
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
            int pattern = gemma2 ? 2 : config.has("sliding_window_pattern")
                    ? config.positiveInt("sliding_window_pattern") : 6;
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
    private static double embeddingScale(JsonFields config, int hidden) {
        float scale = (float) Math.sqrt(hidden);
        String dtype = config.has("dtype") ? config.text("dtype", "") : config.text("torch_dtype", "");
        return switch (dtype) {
            case "bfloat16" -> HalfFloats.fromBf16(HalfFloats.toBf16(scale));
            case "float16" -> HalfFloats.roundToF16(scale);
            default -> scale;
        };
    }

    /** Null turns the cap off (transformers' reading); absent takes the default. */
    private static double softCap(JsonFields config, String field, double absent) {
        if (config.isNull(field)) {
            return 0;
        }
        return config.has(field) ? config.positiveNumber(field) : absent;
    }

    private static String architecture(JsonNode config, JsonFields c) {
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
        String type = c.text("model_type", "");
        if (type.equals("gemma3_text")) {
            return "gemma3";
        }
        if (!ARCHITECTURES.containsValue(type) || type.equals("gemma3")) {
            throw refuse("model_type", "'" + type + "' is not supported (supported: llama, mistral, qwen2, qwen3, phi3, "
                    + "gemma2, gemma3_text, bitnet)");
        }
        return type;
    }

    /** The scaling {@code r} describes (null for plain RoPE); {@code config} holds the top-level fields. */
    private static RopeScaling ropeScaling(JsonFields r, JsonFields config, int headDim) {
        String type = r.has("rope_type") ? r.text("rope_type", "") : r.text("type", "default");
        return switch (type) {
            case "default" -> null;
            case "linear" -> RopeScaling.linear(r.positiveNumber("factor"));
            case "llama3" -> RopeScaling.llama3(r.positiveNumber("factor"), r.positiveNumber("low_freq_factor"),
                    r.positiveNumber("high_freq_factor"), (int) r.positiveNumber("original_max_position_embeddings"));
            case "longrope", "su" -> longrope(r, config, headDim);
            default -> throw r.refuse("rope_type", "'" + type + "' is not supported (supported: llama3, linear, "
                    + "longrope)");
        };
    }

    /** Phi-3's LongRoPE: both factor sets (which positions use which: io.zse.model.LongRope). */
    private static RopeScaling longrope(JsonFields r, JsonFields config, int headDim) {
        int original = r.has("original_max_position_embeddings")
                ? (int) r.positiveNumber("original_max_position_embeddings")
                : config.positiveInt("original_max_position_embeddings");
        int context = config.positiveInt("max_position_embeddings");
        double factor = r.has("factor") ? r.positiveNumber("factor") : (double) context / original;
        double attention = r.has("attention_factor") ? r.positiveNumber("attention_factor")
                : factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(original));
        return RopeScaling.longrope(attention, factorList(r, "short_factor", headDim),
                factorList(r, "long_factor", headDim), original);
    }

    private static List<Double> factorList(JsonFields r, String set, int headDim) {
        JsonNode list = r.list(set);
        if (list.size() != headDim / 2) {
            throw r.refuse(set, "must list " + headDim / 2 + " numbers (one per rotated pair), not " + list);
        }
        List<Double> factors = new ArrayList<>();
        for (JsonNode n : list) {
            if (!n.isNumber() || n.asDouble() <= 0) {
                throw r.refuse(set, "holds " + n + ", not a positive number");
            }
            factors.add(n.asDouble());
        }
        return factors;
    }

    /** A token id the model has no row for would fail at serve (BOS) or never be sampled (EOS: no stop). */
    private static void requireInVocabulary(JsonFields holder, String key, List<Integer> ids, int vocab) {
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw holder.refuse(key, "holds " + id + ", outside the vocabulary of " + vocab
                        + " tokens (vocab_size)");
            }
        }
    }

    /** {@code key} of {@code holder}, or {@code absent}. */
    private static double ropeBase(JsonFields holder, String key, double absent) {
        return ModelConfig.requireRopeBase(holder.name(key), holder.number(key, absent));
    }

    private static IllegalArgumentException refuse(String field, String problem) {
        return new IllegalArgumentException("config.json: " + field + " " + problem);
    }
}
