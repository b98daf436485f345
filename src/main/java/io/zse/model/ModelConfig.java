package io.zse.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.SmallJsonParser;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The normalised configuration of a Llama-family decoder, as stored in the {@code config} section of a .zse file
 * (docs/zse-format.md). Llama, Mistral, Qwen2, Qwen3, Phi-3 and Gemma 2/3 differ only in the flags below.
 *
 * @param architecture      "llama", "mistral", "qwen2", "qwen3" (normalises each head's q and k), "phi3" (its fused
 *                          projections are split at convert time; same decoder), "gemma2" or "gemma3" (see
 *                          {@link GemmaOptions}), or "bitnet"
 * @param hiddenSize        model width d
 * @param numLayers         decoder blocks
 * @param numHeads          query heads
 * @param numKvHeads        key/value heads (grouped-query attention when fewer than numHeads)
 * @param headDim           width of one head
 * @param intermediateSize  SwiGLU hidden width
 * @param vocabSize         rows of the embedding and of lm_head
 * @param contextLength     maximum positions (max_position_embeddings)
 * @param ropeScaling       null for plain RoPE
 * @param attentionBias     q/k/v projections carry biases (Qwen2)
 * @param slidingWindow     attention window in tokens, null for full attention (Mistral; Gemma: its local layers only)
 * @param eosTokenIds       every id that ends generation (config.json and generation_config.json merged)
 * @param gemma             Gemma 2/3's options, null for every other architecture
 */
public record ModelConfig(String architecture, int hiddenSize, int numLayers, int numHeads, int numKvHeads,
                          int headDim, int intermediateSize, int vocabSize, int contextLength, double ropeTheta,
                          RopeScaling ropeScaling, double normEps, boolean tieWordEmbeddings, boolean attentionBias,
                          boolean mlpBias, Integer slidingWindow, Integer bosTokenId, List<Integer> eosTokenIds,
                          Integer padTokenId, GemmaOptions gemma) {

    public ModelConfig {
        eosTokenIds = List.copyOf(eosTokenIds);
        // the importers check these first, naming their files' fields; this catches a config no importer read (a
        // .zse's own section)
        requireRopeBase("config field 'rope_theta'", ropeTheta);
        requireNormEps("config field 'norm_eps'", normEps);
        if (gemma != null && gemma.slidingLayers().size() != numLayers) {
            throw new IllegalArgumentException("gemma.sliding_layers lists " + gemma.slidingLayers().size()
                    + " layers, the model has " + numLayers);
        }
    }

    /**
     * {@code base} where it can be a RoPE base: finite and above 1, so that each pair of dimensions turns slower than
     * the one before (at 1 all turn alike, below 1 the order reverses, at infinity or NaN the angles are NaN).
     *
     * @param field the value's name as its source spells it, which the refusal starts with
     */
    public static double requireRopeBase(String field, double base) {
        if (!(base > 1) || Double.isInfinite(base)) {
            throw new IllegalArgumentException(field + " is " + base + ", expected a finite RoPE base above 1");
        }
        return base;
    }

    /**
     * {@code eps} where it can be a norm epsilon: above 0 (an all-zero row would divide by zero) and below 1 (real
     * models use 1e-5 or 1e-6; 1 or more drowns the row's own variance).
     *
     * @param field the value's name as its source spells it, which the refusal starts with
     */
    public static double requireNormEps(String field, double eps) {
        if (!(eps > 0 && eps < 1)) {
            throw new IllegalArgumentException(field + " is " + eps + ", expected a norm epsilon above 0 and below 1");
        }
        return eps;
    }

    /** Any architecture but Gemma. */
    public ModelConfig(String architecture, int hiddenSize, int numLayers, int numHeads, int numKvHeads, int headDim,
                       int intermediateSize, int vocabSize, int contextLength, double ropeTheta, RopeScaling ropeScaling,
                       double normEps, boolean tieWordEmbeddings, boolean attentionBias, boolean mlpBias,
                       Integer slidingWindow, Integer bosTokenId, List<Integer> eosTokenIds, Integer padTokenId) {
        this(architecture, hiddenSize, numLayers, numHeads, numKvHeads, headDim, intermediateSize, vocabSize,
                contextLength, ropeTheta, ropeScaling, normEps, tieWordEmbeddings, attentionBias, mlpBias, slidingWindow,
                bosTokenId, eosTokenIds, padTokenId, null);
    }

    /**
     * BitNet b1.58: TERNARY projections with int8 activations, an RMSNorm of the attention output before o_proj
     * (attn_sub_norm [d]) and of the gated activations before down_proj (ffn_sub_norm [ff]), relu² gating.
     */
    public boolean bitnet() {
        return architecture.equals("bitnet");
    }

    /** Qwen3 and Gemma 3: q and k are RMS-normalised per head (q_norm, k_norm [headDim]) before RoPE. */
    public boolean queryKeyNorm() {
        return architecture.equals("qwen3") || architecture.equals("gemma3");
    }

    /** The attention window of {@code layer} in tokens, 0 for full attention. */
    public int slidingWindowOf(int layer) {
        return slidingWindow == null || (gemma != null && !gemma.sliding(layer)) ? 0 : slidingWindow;
    }

    /** Parameters of the whole model (for reports). */
    public long parameterCount() {
        return ModelTensors.expected(this).values().stream()
                .mapToLong(shape -> {
                    long n = 1;
                    for (long d : shape) {
                        n *= d;
                    }
                    return n;
                }).sum();
    }

    public String toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        o.put("architecture", architecture);
        o.put("hidden_size", hiddenSize);
        o.put("num_layers", numLayers);
        o.put("num_heads", numHeads);
        o.put("num_kv_heads", numKvHeads);
        o.put("head_dim", headDim);
        o.put("intermediate_size", intermediateSize);
        o.put("vocab_size", vocabSize);
        o.put("context_length", contextLength);
        o.put("rope_theta", ropeTheta);
        if (ropeScaling == null) {
            o.putNull("rope_scaling");
        } else {
            ObjectNode r = o.putObject("rope_scaling");
            r.put("type", ropeScaling.type());
            r.put("factor", ropeScaling.factor());
            if (ropeScaling.type().equals("llama3")) {
                r.put("low_freq_factor", ropeScaling.lowFreqFactor());
                r.put("high_freq_factor", ropeScaling.highFreqFactor());
            }
            if (ropeScaling.type().equals("llama3") || ropeScaling.type().equals("longrope")) {
                r.put("original_context_length", ropeScaling.originalContextLength());
            }
            if (ropeScaling.type().equals("factors") || ropeScaling.type().equals("longrope")) {
                ArrayNode factors = r.putArray("factors");
                ropeScaling.frequencyFactors().forEach(factors::add);
            }
            if (ropeScaling.type().equals("longrope")) {
                ArrayNode factors = r.putArray("long_factors");
                ropeScaling.longFactors().forEach(factors::add);
                r.put("factor_in_weights", ropeScaling.factorInWeights());
            }
        }
        o.put("norm_eps", normEps);
        o.put("tie_word_embeddings", tieWordEmbeddings);
        o.put("attention_bias", attentionBias);
        o.put("mlp_bias", mlpBias);
        putNullable(o, "sliding_window", slidingWindow);
        putNullable(o, "bos_token_id", bosTokenId);
        ArrayNode eos = o.putArray("eos_token_ids");
        eosTokenIds.forEach(eos::add);
        putNullable(o, "pad_token_id", padTokenId);
        if (gemma != null) {
            ObjectNode g = o.putObject("gemma");
            g.put("embedding_scale", gemma.embeddingScale());
            g.put("query_scale", gemma.queryScale());
            g.put("attention_soft_cap", gemma.attentionSoftCap());
            g.put("final_soft_cap", gemma.finalSoftCap());
            ArrayNode sliding = g.putArray("sliding_layers");
            gemma.slidingLayers().forEach(sliding::add);
            g.put("local_rope_theta", gemma.localRopeTheta());
        }
        try {
            return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putNullable(ObjectNode o, String field, Integer value) {
        if (value == null) {
            o.putNull(field);
        } else {
            o.put(field, value);
        }
    }

    /** Parses the config section; a missing or mistyped field is an {@link IllegalArgumentException} naming it. */
    public static ModelConfig fromJson(String json) {
        JsonNode o = SmallJsonParser.parse(json, "config");
        if (!o.isObject()) {
            throw new IllegalArgumentException("config is not a JSON object");
        }
        JsonNode r = o.path("rope_scaling");
        RopeScaling scaling = null;
        if (r.isObject()) {
            List<Double> factors = new ArrayList<>();
            r.path("factors").forEach(n -> factors.add(n.asDouble()));
            // longrope without long_factors (files of the first Phi-3 import): one factor set for every position
            List<Double> longFactors = new ArrayList<>(r.has("long_factors") || !text(r, "type").equals("longrope")
                    ? List.of() : factors);
            r.path("long_factors").forEach(n -> longFactors.add(n.asDouble()));
            // longrope without factor_in_weights (files of the first Phi-3 imports): q and k rows hold the factor
            boolean factorInWeights = text(r, "type").equals("longrope") && r.path("factor_in_weights").asBoolean(true);
            scaling = new RopeScaling(text(r, "type"), number(r, "factor"), r.path("low_freq_factor").asDouble(0),
                    r.path("high_freq_factor").asDouble(0), r.path("original_context_length").asInt(0), factors,
                    longFactors, factorInWeights);
        }
        List<Integer> eos = new ArrayList<>();
        o.path("eos_token_ids").forEach(n -> eos.add(n.asInt()));
        GemmaOptions gemma = null;
        JsonNode g = o.path("gemma");
        if (g.isObject()) {
            List<Boolean> sliding = new ArrayList<>();
            g.path("sliding_layers").forEach(n -> sliding.add(n.asBoolean()));
            gemma = new GemmaOptions(number(g, "embedding_scale"), number(g, "query_scale"),
                    number(g, "attention_soft_cap"), number(g, "final_soft_cap"), sliding, number(g, "local_rope_theta"));
        }
        return new ModelConfig(text(o, "architecture"), integer(o, "hidden_size"), integer(o, "num_layers"),
                integer(o, "num_heads"), integer(o, "num_kv_heads"), integer(o, "head_dim"),
                integer(o, "intermediate_size"), integer(o, "vocab_size"), integer(o, "context_length"),
                number(o, "rope_theta"), scaling, number(o, "norm_eps"), o.path("tie_word_embeddings").asBoolean(),
                o.path("attention_bias").asBoolean(), o.path("mlp_bias").asBoolean(), nullableInt(o, "sliding_window"),
                nullableInt(o, "bos_token_id"), eos, nullableInt(o, "pad_token_id"), gemma);
    }

    private static String text(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isTextual()) {
            throw new IllegalArgumentException("config field '" + field + "' is missing or not a string");
        }
        return n.asText();
    }

    private static int integer(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.canConvertToInt() || !n.isIntegralNumber() || n.asInt() <= 0) {
            throw new IllegalArgumentException("config field '" + field + "' is missing or not a positive integer");
        }
        return n.asInt();
    }

    private static double number(JsonNode o, String field) {
        JsonNode n = o.get(field);
        if (n == null || !n.isNumber()) {
            throw new IllegalArgumentException("config field '" + field + "' is missing or not a number");
        }
        return n.asDouble();
    }

    private static Integer nullableInt(JsonNode o, String field) {
        JsonNode n = o.get(field);
        return n == null || n.isNull() ? null : n.asInt();
    }
}
