package io.zse.model;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A config that no importer checked (a .zse's own config section) meets the same RoPE base and epsilon ranges. */
class ModelConfigTest {
    private static final ModelConfig LLAMA = new ModelConfig("llama", 8, 1, 2, 2, 4, 4, 4, 16, 10000, null, 1e-5, true,
            false, false, null, null, List.of(1), null);

    @Test
    void aConfigSectionOutOfRangeIsRefusedByItsField() {
        String json = LLAMA.toJson();
        assertEquals(LLAMA, ModelConfig.fromJson(json));
        assertEquals("config field 'rope_theta' is 0.5, expected a finite RoPE base above 1", refusal(
                json.replace("\"rope_theta\" : 10000.0", "\"rope_theta\" : 0.5")));
        assertEquals("config field 'norm_eps' is 0.0, expected a norm epsilon above 0 and below 1", refusal(
                json.replace("\"norm_eps\" : 1.0E-5", "\"norm_eps\" : 0")));
    }

    private static String refusal(String json) {
        return assertThrows(IllegalArgumentException.class, () -> ModelConfig.fromJson(json)).getMessage();
    }
}
