package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.zse.model.FormulaCheckpoint;
import io.zse.serve.ModelHost;
import io.zse.tokenizer.Tokenizer;
import jakarta.inject.Inject;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zse serve} on a Gemma 2 checkpoint whose tokenizer_config.json holds a chat template in Gemma 2's turn
 * format: a chat request is rendered as transformers' Jinja2 renders it (features.json, case gemma2_turns: same
 * template, same messages) and the template's own refusals (a system message, roles that do not alternate) reach the
 * client as 400 errors quoting it. The rendering is checked through the server: the chat prompt's token count, and
 * its greedy output equal to a plain completion of the golden rendering's token ids.
 */
@QuarkusTest
@TestProfile(GemmaChatTemplateServeTest.GemmaCheckpoint.class)
class GemmaChatTemplateServeTest {
    static final Path DIR = Path.of("target", "serve-gemma-chat-" + ProcessHandle.current().pid());
    static final Path TINYSTORIES = Path.of("src/test/resources/models/tinystories-656k");
    static final String MESSAGES = "[{\"role\":\"user\",\"content\":\"  Hi, Zürich 👋\\n\"},"
            + "{\"role\":\"assistant\",\"content\":\"Hello! How can I help?\"},"
            + "{\"role\":\"user\",\"content\":\"Name a colour.\"}]";

    public static final class GemmaCheckpoint implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                Path model = DIR.resolve("tiny-gemma2-chat");
                if (!Files.exists(model.resolve("model.safetensors"))) {
                    JsonNode fixture = json("/gguf/tiny-gemma2-f32.json");
                    FormulaCheckpoint.write(fixture.get("config"), fixture.get("weights").get("seed").asLong(),
                            Files.readAllBytes(TINYSTORIES.resolve("tokenizer.json")), model);
                    ObjectNode tokenizerConfig = (ObjectNode) new ObjectMapper().readTree(
                            TINYSTORIES.resolve("tokenizer_config.json").toFile());
                    tokenizerConfig.put("chat_template", golden().get("template").asText());
                    Files.writeString(model.resolve("tokenizer_config.json"), tokenizerConfig.toString());
                }
                return Map.of("zse.model-path", model.toAbsolutePath().toString(),
                        "zse.cache-dir", DIR.resolve("cache").toAbsolutePath().toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Inject
    ModelLifecycle lifecycle;

    static JsonNode json(String resource) throws IOException {
        try (InputStream in = GemmaChatTemplateServeTest.class.getResourceAsStream(resource)) {
            return new ObjectMapper().readTree(in);
        }
    }

    /** features.json's gemma2_turns case: the template rendered by transformers for MESSAGES. */
    static JsonNode golden() throws IOException {
        for (JsonNode c : json("/chat-templates/features/features.json").get("cases")) {
            if (c.get("name").asText().equals("gemma2_turns")) {
                return c;
            }
        }
        throw new AssertionError("no gemma2_turns case");
    }

    @BeforeEach
    void ready() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (lifecycle.host().state().phase() == ModelHost.Phase.LOADING && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(ModelHost.Phase.READY, lifecycle.host().state().phase(), lifecycle.host().state().failure());
    }

    static Response post(String path, String body) {
        return RestAssured.given().header("Authorization", "Bearer test-key").contentType(ContentType.JSON).body(body)
                .post(path);
    }

    @Test
    void aChatIsRenderedAsTransformersRendersGemmasTemplate() throws IOException {
        JsonNode golden = golden();
        assertEquals(MESSAGES.replace("\\n", "\n"),
                new ObjectMapper().writeValueAsString(golden.get("extra").get("messages")).replace("\\n", "\n"));
        // The golden was rendered with bos_token "<s>"; this tokenizer's is <|start_story|>, the template's first
        // output.
        String expected = golden.get("expected").asText();
        assertTrue(expected.startsWith("<s><start_of_turn>user\nHi, Zürich 👋<end_of_turn>\n"), expected);
        String rendered = "<|start_story|>" + expected.substring("<s>".length());
        Tokenizer tokenizer = Tokenizer.fromJson(Files.readAllBytes(TINYSTORIES.resolve("tokenizer.json")));
        int[] ids = tokenizer.encode(rendered, false);
        Response chat = post("/v1/chat/completions", "{\"model\":\"tiny-gemma2-chat\",\"messages\":" + MESSAGES
                + ",\"max_tokens\":8,\"temperature\":0}");
        assertEquals(200, chat.statusCode(), chat.asString());
        assertEquals(ids.length, chat.<Integer>path("usage.prompt_tokens"));
        Response completion = post("/v1/completions", "{\"model\":\"tiny-gemma2-chat\",\"prompt\":"
                + Arrays.toString(ids) + ",\"max_tokens\":8,\"temperature\":0}");
        assertEquals(200, completion.statusCode(), completion.asString());
        assertEquals(completion.<String>path("choices[0].text"), chat.<String>path("choices[0].message.content"));
        assertEquals(completion.<Integer>path("usage.completion_tokens"),
                chat.<Integer>path("usage.completion_tokens"));
    }

    @Test
    void theTemplatesOwnRefusalsAreClientErrors() {
        Response system = post("/v1/chat/completions", "{\"model\":\"tiny-gemma2-chat\",\"messages\":"
                + "[{\"role\":\"system\",\"content\":\"Be brief.\"}," + MESSAGES.substring(1) + ",\"max_tokens\":4}");
        assertEquals(400, system.statusCode(), system.asString());
        assertTrue(system.<String>path("error.message").contains("this model takes no system message"),
                system.asString());
        Response twice = post("/v1/chat/completions", "{\"model\":\"tiny-gemma2-chat\",\"messages\":"
                + "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}],\"max_tokens\":4}");
        assertEquals(400, twice.statusCode(), twice.asString());
        assertTrue(twice.<String>path("error.message").contains(
                "turns must alternate, starting with the user"), twice.asString());
    }
}
