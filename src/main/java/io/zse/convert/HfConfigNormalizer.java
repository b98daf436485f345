package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
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
            "Phi3ForCausalLM", "phi3");

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
        String act = config.path("hidden_act").asText("silu");
        if (!act.equals("silu")) {
            throw refuse("hidden_act", "'" + act + "' is not supported (only silu)");
        }
        JsonNode rope = config.path("rope_parameters");
        double theta;
        RopeScaling scaling;
        if (rope.isObject()) {
            // transformers 5 writes theta and scaling together in one object.
            theta = rope.path("rope_theta").asDouble(10000.0);
            scaling = ropeScaling(rope, "rope_parameters", config, headDim);
        } else {
            theta = config.path("rope_theta").asDouble(10000.0);
            scaling = config.path("rope_scaling").isObject()
                    ? ropeScaling(config.get("rope_scaling"), "rope_scaling", config, headDim) : null;
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
        return new ModelConfig(architecture, hidden, positiveInt(config, "num_hidden_layers"), heads, kvHeads, headDim,
                positiveInt(config, "intermediate_size"), positiveInt(config, "vocab_size"),
                positiveInt(config, "max_position_embeddings"), theta, scaling,
                config.path("rms_norm_eps").asDouble(1e-6), config.path("tie_word_embeddings").asBoolean(false),
                qwen2 || config.path("attention_bias").asBoolean(false), config.path("mlp_bias").asBoolean(false),
                window, bos, eos, pad);
    }

    private static String architecture(JsonNode config) {
        JsonNode list = config.path("architectures");
        if (list.isArray() && !list.isEmpty()) {
            String name = list.get(0).asText();
            String arch = ARCHITECTURES.get(name);
            if (arch == null || list.size() != 1) {
                throw refuse("architectures", list + " is not supported (supported: LlamaForCausalLM, "
                        + "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM)");
            }
            return arch;
        }
        String type = config.path("model_type").asText("");
        if (!ARCHITECTURES.containsValue(type)) {
            throw refuse("model_type", "'" + type + "' is not supported (supported: llama, mistral, qwen2, qwen3, phi3)");
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
