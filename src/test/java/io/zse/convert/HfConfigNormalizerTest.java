package io.zse.convert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.model.GemmaOptions;
import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Options of the Qwen3, Phi-3 and Gemma configs that the golden checkpoints do not cover: choices and refusals. */
class HfConfigNormalizerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A small Phi-3 config with longrope over 4 rotated pairs (head_dim 8). */
    private static ObjectNode phi3(int context, int original) {
        ObjectNode c = JSON.createObjectNode();
        c.putArray("architectures").add("Phi3ForCausalLM");
        c.put("hidden_size", 32).put("num_attention_heads", 4).put("num_key_value_heads", 2)
                .put("intermediate_size", 64).put("num_hidden_layers", 1).put("vocab_size", 100)
                .put("max_position_embeddings", context).put("original_max_position_embeddings", original)
                .put("sliding_window", 2047);
        ObjectNode rope = c.putObject("rope_scaling").put("type", "su");
        rope.putArray("short_factor").add(1.0).add(1.0).add(1.5).add(2.0);
        rope.putArray("long_factor").add(1.0).add(2.0).add(4.0).add(8.0);
        return c;
    }

    @Test
    void longropeKeepsBothFactorSetsAndTheAttentionFactor() {
        ModelConfig c = HfConfigNormalizer.normalize(phi3(4096, 256), null);
        assertEquals("phi3", c.architecture());
        assertEquals(RopeScaling.longrope(Math.sqrt(1 + Math.log(16) / Math.log(256)), List.of(1.0, 1.0, 1.5, 2.0),
                List.of(1.0, 2.0, 4.0, 8.0), 256), c.ropeScaling());
        assertEquals(2047, c.slidingWindow());
        assertEquals(c, ModelConfig.fromJson(c.toJson()), "through the .zse config section");

        ModelConfig same = HfConfigNormalizer.normalize(phi3(256, 256), null);
        assertEquals(1.0, same.ropeScaling().factor(), "no attention factor without an extended context");

        ObjectNode given = phi3(4096, 256);
        ((ObjectNode) given.get("rope_scaling")).put("attention_factor", 1.25);
        assertEquals(1.25, HfConfigNormalizer.normalize(given, null).ropeScaling().factor());
    }

    /** A .zse written by the first Phi-3 import holds one factor set, which then serves every position. */
    @Test
    void aLongropeConfigWithOneFactorSetUsesItEverywhere() {
        ModelConfig c = HfConfigNormalizer.normalize(phi3(4096, 256), null);
        String old = c.toJson().replaceFirst("(?s),\\s*\"long_factors\"\\s*:\\s*\\[[^]]*]", "");
        assertTrue(!old.contains("long_factors") && old.contains("\"factors\""), old);
        RopeScaling read = ModelConfig.fromJson(old).ropeScaling();
        assertEquals(read.frequencyFactors(), read.longFactors());
    }

    @Test
    void unsupportedOptionsAreRefusedByName() {
        ObjectNode partial = phi3(4096, 256).put("partial_rotary_factor", 0.5);
        assertEquals("config.json: partial_rotary_factor 0.5 is not supported (only 1)", refusal(partial));

        ObjectNode shortList = phi3(4096, 256);
        ((ObjectNode) shortList.get("rope_scaling")).putArray("long_factor").add(1.0);
        assertEquals("config.json: rope_scaling.long_factor must list 4 numbers (one per rotated pair), not [1.0]",
                refusal(shortList));

        ObjectNode negative = phi3(4096, 256);
        ((ObjectNode) negative.get("rope_scaling")).putArray("long_factor").add(1.0).add(-2.0).add(1.0).add(1.0);
        assertEquals("config.json: rope_scaling.long_factor holds -2.0, not a positive number", refusal(negative));

        ObjectNode qwen3 = phi3(4096, 256);
        qwen3.remove("rope_scaling");
        qwen3.putArray("architectures").add("Qwen3ForCausalLM");
        qwen3.put("use_sliding_window", true);
        assertEquals("config.json: use_sliding_window true is not supported for qwen3", refusal(qwen3));
    }

    /** Gemma 3 1B's config.json as published (old-style keys: rope_local_base_freq, sliding_window_pattern). */
    private static ObjectNode gemma3() {
        ObjectNode c = JSON.createObjectNode();
        c.putArray("architectures").add("Gemma3ForCausalLM");
        c.put("model_type", "gemma3_text").put("hidden_size", 1152).put("num_attention_heads", 4)
                .put("num_key_value_heads", 1).put("head_dim", 256).put("intermediate_size", 6912)
                .put("num_hidden_layers", 26).put("vocab_size", 262144).put("max_position_embeddings", 32768)
                .put("hidden_activation", "gelu_pytorch_tanh").put("query_pre_attn_scalar", 256)
                .put("rope_theta", 1000000).put("rope_local_base_freq", 10000).put("sliding_window", 512)
                .put("sliding_window_pattern", 6).put("torch_dtype", "bfloat16").put("bos_token_id", 2)
                .put("eos_token_id", 1).put("pad_token_id", 0);
        c.putNull("rope_scaling");
        c.putNull("final_logit_softcapping");
        c.putNull("attn_logit_softcapping");
        return c;
    }

    @Test
    void gemma3OptionsFollowTransformers() {
        ModelConfig c = HfConfigNormalizer.normalize(gemma3(), null);
        GemmaOptions g = c.gemma();
        assertEquals("gemma3", c.architecture());
        assertEquals(true, c.tieWordEmbeddings()); // Gemma's default
        // sqrt(1152) = 33.94 rounded to bfloat16, the checkpoint's dtype, as transformers multiplies by it
        assertEquals(34.0, g.embeddingScale());
        assertEquals(1 / 16.0, g.queryScale());
        assertEquals(0.0, g.attentionSoftCap());
        assertEquals(0.0, g.finalSoftCap());
        assertEquals(1_000_000.0, c.ropeTheta());
        assertEquals(10_000.0, g.localRopeTheta());
        for (int layer = 0; layer < 26; layer++) {
            assertEquals((layer + 1) % 6 != 0, g.sliding(layer), "layer " + layer);
            assertEquals((layer + 1) % 6 != 0 ? 512 : 0, c.slidingWindowOf(layer), "window of layer " + layer);
        }

        ObjectNode f32 = gemma3().put("torch_dtype", "float32");
        assertEquals((float) Math.sqrt(1152), HfConfigNormalizer.normalize(f32, null).gemma().embeddingScale());

        // transformers 5 writes the RoPE of each layer type in rope_parameters
        ObjectNode v5 = gemma3();
        v5.remove(List.of("rope_theta", "rope_local_base_freq", "rope_scaling"));
        ObjectNode rope = v5.putObject("rope_parameters");
        rope.putObject("full_attention").put("rope_type", "linear").put("factor", 8.0).put("rope_theta", 1e6);
        rope.putObject("sliding_attention").put("rope_type", "default").put("rope_theta", 1e4);
        ModelConfig scaled = HfConfigNormalizer.normalize(v5, null);
        assertEquals(RopeScaling.linear(8.0), scaled.ropeScaling());
        assertEquals(1e6, scaled.ropeTheta());
        assertEquals(1e4, scaled.gemma().localRopeTheta());
    }

    @Test
    void gemma2DefaultsAreTransformers() {
        ObjectNode c = gemma3();
        c.putArray("architectures").add("Gemma2ForCausalLM");
        c.put("model_type", "gemma2").put("num_hidden_layers", 4);
        c.remove(List.of("final_logit_softcapping", "attn_logit_softcapping", "sliding_window_pattern",
                "rope_local_base_freq"));
        GemmaOptions g = HfConfigNormalizer.normalize(c, null).gemma();
        assertEquals(50.0, g.attentionSoftCap());
        assertEquals(30.0, g.finalSoftCap());
        assertEquals(List.of(true, false, true, false), g.slidingLayers());
        assertEquals(1_000_000.0, g.localRopeTheta()); // Gemma 2: one RoPE for every layer

        c.putArray("layer_types").add("full_attention").add("full_attention").add("sliding_attention")
                .add("full_attention");
        assertEquals(List.of(false, false, true, false), HfConfigNormalizer.normalize(c, null).gemma().slidingLayers());
    }

    @Test
    void unsupportedGemmaOptionsAreRefusedByName() {
        ObjectNode multimodal = gemma3();
        multimodal.putArray("architectures").add("Gemma3ForConditionalGeneration");
        assertEquals("config.json: architectures [\"Gemma3ForConditionalGeneration\"] is not supported: the "
                + "multimodal Gemma 3 (vision tower, text_config) is not converted; its text-only Gemma3ForCausalLM "
                + "form is", refusal(multimodal));
        assertEquals("config.json: hidden_activation 'gelu' is not supported for gemma3 (only gelu_pytorch_tanh)",
                refusal(gemma3().put("hidden_activation", "gelu")));
        assertEquals("config.json: use_bidirectional_attention true is not supported (causal attention only)",
                refusal(gemma3().put("use_bidirectional_attention", true)));
        ObjectNode types = gemma3();
        types.putArray("layer_types").add("chunked_attention");
        assertEquals("config.json: layer_types lists 1 layers, num_hidden_layers is 26", refusal(types));
        types.put("num_hidden_layers", 1);
        assertEquals("config.json: layer_types holds \"chunked_attention\" (supported: sliding_attention, "
                + "full_attention)", refusal(types));
        ObjectNode noWindow = gemma3();
        noWindow.putNull("sliding_window");
        assertEquals("config.json: sliding_window is missing, and layer_types has sliding_attention layers",
                refusal(noWindow));
        ObjectNode gemma2Scaling = gemma3();
        gemma2Scaling.putArray("architectures").add("Gemma2ForCausalLM");
        gemma2Scaling.putObject("rope_scaling").put("rope_type", "linear").put("factor", 2.0);
        assertEquals("config.json: rope_scaling is not supported for gemma2", refusal(gemma2Scaling));
    }

    /**
     * A RoPE base must be finite and above 1, a norm epsilon above 0 and below 1: anything else is refused by the field
     * that holds it, in either layout of config.json (top level, or transformers 5's rope_parameters).
     */
    @Test
    void ropeBasesAndNormEpsilonsOutOfRangeAreRefusedByName() {
        for (double bad : new double[]{0, -10000, 1, 0.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertEquals("config.json: rope_theta is " + bad + ", expected a finite RoPE base above 1",
                    refusal(phi3(4096, 256).put("rope_theta", bad)));
        }
        for (double bad : new double[]{0, -1e-6, 1, 2, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertEquals("config.json: rms_norm_eps is " + bad + ", expected a norm epsilon above 0 and below 1",
                    refusal(phi3(4096, 256).put("rms_norm_eps", bad)));
        }
        ObjectNode v5 = phi3(4096, 256);
        v5.remove("rope_scaling");
        v5.putObject("rope_parameters").put("rope_type", "default").put("rope_theta", 0.0);
        assertEquals("config.json: rope_parameters.rope_theta is 0.0, expected a finite RoPE base above 1",
                refusal(v5));
        assertEquals("config.json: rope_local_base_freq is -1.0, expected a finite RoPE base above 1",
                refusal(gemma3().put("rope_local_base_freq", -1.0)));
        ObjectNode gemma3v5 = gemma3();
        gemma3v5.remove(List.of("rope_theta", "rope_local_base_freq", "rope_scaling"));
        ObjectNode rope = gemma3v5.putObject("rope_parameters");
        rope.putObject("full_attention").put("rope_type", "default").put("rope_theta", 1e6);
        rope.putObject("sliding_attention").put("rope_type", "default").put("rope_theta", 1.0);
        assertEquals("config.json: rope_parameters.sliding_attention.rope_theta is 1.0, expected a finite RoPE base "
                + "above 1", refusal(gemma3v5));
    }

    /**
     * Every kind of field read through one typed reader: a present field of the wrong JSON type is refused by name,
     * value and expected type, in config.json, in its nested objects and in generation_config.json; an integer serves
     * as a float, and null as absent where transformers reads it so.
     */
    @Test
    void fieldsOfTheWrongTypeAreRefusedByNameValueAndType() {
        assertEquals("config.json: mlp_bias is \"true\", expected true or false",
                refusal(phi3(4096, 256).put("mlp_bias", "true")));
        assertEquals("config.json: partial_rotary_factor is \"abc\", expected a number",
                refusal(phi3(4096, 256).put("partial_rotary_factor", "abc")));
        assertEquals("config.json: bos_token_id is 1.5, expected an integer",
                refusal(phi3(4096, 256).put("bos_token_id", 1.5)));
        assertEquals("config.json: hidden_act is 7, expected a string", refusal(phi3(4096, 256).put("hidden_act", 7)));
        assertEquals("config.json: rms_norm_eps is null, expected a number",
                refusal(phi3(4096, 256).putNull("rms_norm_eps")));
        assertEquals("config.json: rope_scaling is \"su\", expected an object",
                refusal(phi3(4096, 256).put("rope_scaling", "su")));
        ObjectNode nested = phi3(4096, 256);
        ((ObjectNode) nested.get("rope_scaling")).put("attention_factor", "2");
        assertEquals("config.json: rope_scaling.attention_factor is \"2\", expected a number", refusal(nested));
        ObjectNode generation = JSON.createObjectNode();
        generation.putArray("eos_token_id").add(2).add("3");
        assertEquals("generation_config.json: eos_token_id is [2,\"3\"], expected an integer or a list of integers",
                assertThrows(IllegalArgumentException.class,
                        () -> HfConfigNormalizer.normalize(phi3(4096, 256), generation)).getMessage());

        ObjectNode accepted = phi3(4096, 256).put("rope_theta", 500000).put("partial_rotary_factor", 1);
        accepted.putNull("num_key_value_heads");
        accepted.putNull("bos_token_id");
        accepted.putNull("sliding_window");
        accepted.putNull("tie_word_embeddings"); // transformers: None is false
        ModelConfig c = HfConfigNormalizer.normalize(accepted, null);
        assertEquals(false, c.tieWordEmbeddings());
        assertEquals(true, HfConfigNormalizer.normalize(phi3(4096, 256).put("tie_word_embeddings", true), null)
                .tieWordEmbeddings());
        assertEquals(500000.0, c.ropeTheta());
        assertEquals(4, c.numKvHeads());
        assertEquals(null, c.bosTokenId());
    }

    private static String refusal(ObjectNode config) {
        return assertThrows(IllegalArgumentException.class, () -> HfConfigNormalizer.normalize(config, null))
                .getMessage();
    }
}
