package io.zse.tokenizer;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The real Qwen3 tokenizer_config.json: its template renders the reference case exactly as transformers does. */
class TokenizerConfigTest {
    @Test
    void qwen3ConfigRendersTheReferencePrompt() throws IOException {
        TokenizerConfig config = TokenizerConfig.parse(resource("/tokenizers/qwen3/tokenizer_config.json"));
        assertNull(config.bosToken());
        assertEquals("<|im_end|>", config.eosToken());
        Map<String, Object> c = new ObjectMapper().readValue(resource("/chat-templates/cases/basic.json"),
                new TypeReference<>() {
                });
        @SuppressWarnings("unchecked")
        String prompt = config.compiledChatTemplate().orElseThrow().render((List<Map<String, Object>>) c.get("messages"),
                null, (Boolean) c.get("add_generation_prompt"), config.bosToken(), config.eosToken(), Map.of());
        assertEquals(new String(resource("/chat-templates/expected/qwen3__basic.txt"), StandardCharsets.UTF_8), prompt);
    }

    @Test
    void tokenObjectsAndNamedTemplates() {
        TokenizerConfig config = TokenizerConfig.parse("""
                {"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
                 "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}
                """.getBytes(StandardCharsets.UTF_8));
        assertEquals(new TokenizerConfig("D", "<s>", "</s>"), config);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = TokenizerConfigTest.class.getResourceAsStream(name)) {
            return in.readAllBytes();
        }
    }
}
