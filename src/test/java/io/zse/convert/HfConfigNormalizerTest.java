package io.zse.convert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.model.ModelConfig;
import io.zse.model.RopeScaling;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Options of the Qwen3 and Phi-3 configs that the golden checkpoints do not cover: choices and refusals. */
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

    private static String refusal(ObjectNode config) {
        return assertThrows(IllegalArgumentException.class, () -> HfConfigNormalizer.normalize(config, null))
                .getMessage();
    }
}
