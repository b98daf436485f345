package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Set;

/**
 * How a BitNet b1.58 checkpoint stores its seven projections (q, k, v, o, gate, up, down), from config.json's
 * {@code quantization_config} (transformers' {@code BitNetQuantConfig}). Every form becomes TERNARY codes t with one
 * scale s per tensor (w = t · s), exactly what transformers multiplies:
 * <ul>
 * <li>{@link #PACKED_DIVIDED}: {@code linear_class "bitlinear"} (the default; microsoft/bitnet-b1.58-2B-4T): uint8
 * [out / 4, in], four 2-bit codes t + 1 per byte (row q·out/4 + r of the weight in bits 2q of byte row r), and a
 * {@code weight_scale} [1] that the output is divided by: s = 1 / weight_scale.</li>
 * <li>{@link #PACKED_MULTIPLIED}: {@code "autobitlinear"}, {@code "offline"}: the same packing, output multiplied by
 * {@code weight_scale}: s = weight_scale.</li>
 * <li>{@link #FLOAT_ONLINE}: {@code "autobitlinear"}, {@code "online"}: float weights W, ternarised as transformers'
 * {@code WeightQuant} does at every forward: m = 1 / max(mean|W|, 1e-5), t = clamp(round(W·m), -1, 1), s = 1 / m.</li>
 * </ul>
 */
public enum BitNetProjections {
    PACKED_DIVIDED,
    PACKED_MULTIPLIED,
    FLOAT_ONLINE;

    private static final Set<String> PROJECTIONS = Set.of("self_attn.q_proj.weight", "self_attn.k_proj.weight",
            "self_attn.v_proj.weight", "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
            "mlp.down_proj.weight");

    /** True for a decoder layer's projection weight ({@code model.layers.N.self_attn.q_proj.weight}, ...). */
    public static boolean isProjection(String name) {
        int dot = name.indexOf('.', "model.layers.".length());
        return name.startsWith("model.layers.") && dot > 0 && PROJECTIONS.contains(name.substring(dot + 1));
    }

    /** The scale tensor stored beside a packed projection. */
    public static String scaleTensor(String projection) {
        return projection.substring(0, projection.length() - "weight".length()) + "weight_scale";
    }

    public boolean packed() {
        return this != FLOAT_ONLINE;
    }

    /** Reads config.json's quantization_config, refusing by name what transformers' BitNet would run otherwise. */
    public static BitNetProjections of(JsonNode config) {
        JsonNode q = config.path("quantization_config");
        if (!q.isObject()) {
            throw refuse("quantization_config", "is missing: without it transformers runs BitNet's projections as "
                    + "plain float layers, which zse does not (it runs BitNet b1.58's ternary ones)");
        }
        String method = q.path("quant_method").asText("");
        if (!method.equals("bitnet")) {
            throw refuse("quantization_config.quant_method", "'" + method + "' is not supported (only bitnet)");
        }
        if (q.path("use_rms_norm").asBoolean(false)) {
            throw refuse("quantization_config.use_rms_norm", "true is not supported (an RMSNorm inside each BitLinear)");
        }
        for (JsonNode module : q.path("modules_to_not_convert")) {
            if (!module.asText().equals("lm_head")) {
                throw refuse("quantization_config.modules_to_not_convert", "lists " + module
                        + ": only lm_head may stay unquantized");
            }
        }
        String linear = q.path("linear_class").asText("bitlinear");
        String mode = q.path("quantization_mode").asText("offline");
        if (!mode.equals("offline") && !mode.equals("online")) {
            throw refuse("quantization_config.quantization_mode", "'" + mode + "' is not supported (offline, online)");
        }
        return switch (linear) {
            case "bitlinear" -> PACKED_DIVIDED; // BitLinear reads packed weights in either mode
            case "autobitlinear" -> mode.equals("online") ? FLOAT_ONLINE : PACKED_MULTIPLIED;
            default -> throw refuse("quantization_config.linear_class", "'" + linear
                    + "' is not supported (bitlinear, autobitlinear)");
        };
    }

    private static IllegalArgumentException refuse(String field, String problem) {
        return new IllegalArgumentException("config.json: " + field + " " + problem);
    }
}
