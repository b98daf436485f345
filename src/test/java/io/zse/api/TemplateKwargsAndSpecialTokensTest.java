package io.zse.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * chat_template_kwargs and skip_special_tokens on the demo model's weights with a chat template that reads a variable
 * of its own ({@code story_start}, written before the messages) and a tokenizer where "." (id 10) is a special token
 * (not normalized, so that it is skipped as one).
 */
@QuarkusTest
@TestProfile(TemplateKwargsAndSpecialTokensTest.CustomTokenizer.class)
class TemplateKwargsAndSpecialTokensTest extends ApiTestBase {
    static final Path DIR = Path.of("target", "serve-template-kwargs-" + ProcessHandle.current().pid());
    static final Path TINYSTORIES = Path.of("src/test/resources/models/tinystories-656k");
    static final String TEMPLATE = "{{ bos_token }}{% if story_start is defined %}{{ story_start }} {% endif %}"
            + "{% for m in messages %}{{ m['content'] }}{% endfor %}";

    public static final class CustomTokenizer implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                Path model = DIR.resolve("tinystories-656k");
                if (!Files.exists(model.resolve("model.safetensors"))) {
                    Files.createDirectories(model);
                    for (String file : List.of("config.json", "generation_config.json", "model.safetensors",
                            "special_tokens_map.json")) {
                        Files.copy(TINYSTORIES.resolve(file), model.resolve(file));
                    }
                    ObjectMapper json = new ObjectMapper();
                    ObjectNode tokenizer = (ObjectNode) json.readTree(TINYSTORIES.resolve("tokenizer.json").toFile());
                    tokenizer.withArray("added_tokens").addObject().put("id", 10).put("content", ".")
                            .put("single_word", false).put("lstrip", false).put("rstrip", false)
                            .put("normalized", false).put("special", true);
                    Files.writeString(model.resolve("tokenizer.json"), tokenizer.toString());
                    ObjectNode config = (ObjectNode) json.readTree(TINYSTORIES.resolve("tokenizer_config.json")
                            .toFile());
                    config.put("chat_template", TEMPLATE);
                    Files.writeString(model.resolve("tokenizer_config.json"), config.toString());
                }
                return Map.of("zse.model-path", model.toAbsolutePath().toString(),
                        "zse.cache-dir", DIR.resolve("cache").toAbsolutePath().toString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static JsonPath chatOk(String content, String extra) {
        return api().body(chat(content, "\"temperature\":0,\"max_tokens\":40" + extra)).post("/v1/chat/completions")
                .then().statusCode(200).extract().jsonPath();
    }

    @Test
    void chatTemplateKwargsReachTheTemplate() {
        JsonPath whole = chatOk("One day", "");
        JsonPath split = chatOk("day", ",\"chat_template_kwargs\":{\"story_start\":\"One\"}");
        assertEquals(whole.getInt("usage.prompt_tokens"), split.getInt("usage.prompt_tokens"));
        assertEquals(whole.getString("choices[0].message.content"), split.getString("choices[0].message.content"));
        // streamed alike: the usage chunk gives the rendered prompt's length
        String body = api().body(chat("day", "\"temperature\":0,\"max_tokens\":40,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},"
                        + "\"chat_template_kwargs\":{\"story_start\":\"One\"}"))
                .post("/v1/chat/completions").then().statusCode(200).extract().asString();
        List<String> events = SseEvents.parse(body);
        assertEquals(whole.getInt("usage.prompt_tokens"),
                new JsonPath(events.get(events.size() - 1)).getInt("usage.prompt_tokens"));
        // as in vLLM they may override what the server sets: without bos_token the prompt is the text's own tokens
        int withBos = api().body(completion("One day", "\"max_tokens\":1")).post("/v1/completions").then()
                .statusCode(200).extract().path("usage.prompt_tokens");
        assertEquals(withBos - 1,
                chatOk("One day", ",\"chat_template_kwargs\":{\"bos_token\":\"\"}").getInt("usage.prompt_tokens"));
        api().body(chat("day", "\"chat_template_kwargs\":{\"messages\":[]}")).post("/v1/chat/completions").then()
                .statusCode(400).body("error.param", equalTo("chat_template_kwargs.messages"));
    }

    @Test
    void skipSpecialTokensFalseKeepsThemInTheText() {
        // the demo's story after "One day" has its first lone "." at token 121 ("... nest back.")
        JsonPath kept = api().body(completion("One day", "\"temperature\":0,\"max_tokens\":121,"
                + "\"skip_special_tokens\":false")).post("/v1/completions").then().statusCode(200).extract().jsonPath();
        JsonPath skipped = api().body(completion("One day", "\"temperature\":0,\"max_tokens\":121"))
                .post("/v1/completions").then().statusCode(200).extract().jsonPath();
        String text = kept.getString("choices[0].text");
        assertEquals("back.", text.substring(text.length() - 5), text);
        assertEquals(text.substring(0, text.length() - 1), skipped.getString("choices[0].text"));
        JsonPath chat = chatOk("One day", ",\"max_tokens\":121,\"skip_special_tokens\":false");
        assertEquals(text, chat.getString("choices[0].message.content"));
    }
}
