package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every /v1 endpoint, the Funqy functions, health, /ping, OpenAPI and metrics, as a client sees them. */
@QuarkusTest
class OpenAiApiTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void listsAndDescribesTheModel() {
        api().get("/v1/models").then().statusCode(200).body("object", equalTo("list"))
                .body("data", hasSize(1)).body("data[0].id", equalTo(MODEL)).body("data[0].object", equalTo("model"))
                .body("data[0].owned_by", notNullValue()).body("data[0].created", notNullValue());
        api().get("/v1/models/" + MODEL).then().statusCode(200).body("id", equalTo(MODEL));
        api().get("/v1/models/gpt-4").then().statusCode(404).body("error.code", equalTo("model_not_found"))
                .body("error.type", equalTo("invalid_request_error")).body("error.param", equalTo("model"));
    }

    @Test
    void chatCompletionHasOpenAisShape() {
        api().body(chat("Once upon a time", "\"max_tokens\":8,\"temperature\":0")).post("/v1/chat/completions")
                .then().statusCode(200).contentType(ContentType.JSON)
                .body("id", startsWith("chatcmpl-")).body("object", equalTo("chat.completion"))
                .body("model", equalTo(MODEL)).body("choices", hasSize(1)).body("choices[0].index", equalTo(0))
                .body("choices[0].message.role", equalTo("assistant"))
                .body("choices[0].message.content", notNullValue())
                .body("choices[0].logprobs", nullValue()).body("choices[0].finish_reason", equalTo("length"))
                .body("usage.completion_tokens", equalTo(8))
                .body("usage.total_tokens", equalTo(api().body(chat("Once upon a time", "\"max_tokens\":8"))
                        .post("/v1/chat/completions").<Integer>path("usage.prompt_tokens") + 8));
    }

    @Test
    void greedyIsDeterministicAndSeedsReproduceSampling() {
        String greedy = chat("Tom had a", "\"max_completion_tokens\":20,\"temperature\":0");
        assertEquals(content(greedy), content(greedy));
        String seeded = chat("Tom had a", "\"max_tokens\":20,\"temperature\":1.2,\"seed\":42,\"top_k\":50,\"min_p\":0.01");
        assertEquals(content(seeded), content(seeded));
        assertNotEquals(content(seeded),
                content(chat("Tom had a", "\"max_tokens\":20,\"temperature\":1.2,\"seed\":43,\"top_k\":50,\"min_p\":0.01")));
    }

    private static String content(String body) {
        return api().body(body).post("/v1/chat/completions").then().statusCode(200).extract()
                .path("choices[0].message.content");
    }

    @Test
    void stopStringsEndTheTextAndAreNotIncluded() {
        String full = api().body(completion("Once upon a time", "\"max_tokens\":30,\"temperature\":0"))
                .post("/v1/completions").then().statusCode(200).extract().path("choices[0].text");
        String stop = full.substring(10, 14);
        api().body(completion("Once upon a time", "\"max_tokens\":30,\"temperature\":0,\"stop\":[\"" + stop + "\"]"))
                .post("/v1/completions").then().statusCode(200)
                .body("choices[0].text", equalTo(full.substring(0, full.indexOf(stop))))
                .body("choices[0].finish_reason", equalTo("stop"));
    }

    @Test
    void completionsEchoLogprobsAndSeveralChoices() {
        api().body(completion("Once upon a time", "\"max_tokens\":5,\"echo\":true,\"temperature\":0"))
                .post("/v1/completions").then().statusCode(200).body("object", equalTo("text_completion"))
                .body("id", startsWith("cmpl-")).body("choices[0].text", startsWith("Once upon a time"));
        api().body(completion("Once upon a time", "\"max_tokens\":4,\"logprobs\":2,\"temperature\":0"))
                .post("/v1/completions").then().statusCode(200)
                .body("choices[0].logprobs.tokens", hasSize(4)).body("choices[0].logprobs.token_logprobs", hasSize(4))
                .body("choices[0].logprobs.top_logprobs", hasSize(4)).body("choices[0].logprobs.text_offset", hasSize(4));
        api().body(chat("Once upon a time", "\"max_tokens\":3,\"logprobs\":true,\"top_logprobs\":3"))
                .post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].logprobs.content", hasSize(3))
                .body("choices[0].logprobs.content[0].top_logprobs", hasSize(3))
                .body("choices[0].logprobs.content[0].bytes", notNullValue());
        api().body(completion("Once upon a time", "\"max_tokens\":6,\"n\":3,\"temperature\":1,\"seed\":1"))
                .post("/v1/completions").then().statusCode(200).body("choices", hasSize(3))
                .body("choices[2].index", equalTo(2)).body("usage.completion_tokens", equalTo(18));
        // token ids as the prompt
        api().body("{\"model\":\"" + MODEL + "\",\"prompt\":[1, 80, 200],\"max_tokens\":3}").post("/v1/completions")
                .then().statusCode(200).body("usage.prompt_tokens", equalTo(3));
        // an id past 64 bits is not taken for its low bits (2^64 + 5 is not token 5)
        api().body("{\"model\":\"" + MODEL + "\",\"prompt\":[18446744073709551621],\"max_tokens\":3}")
                .post("/v1/completions").then().statusCode(400).body("error.param", equalTo("prompt"))
                .body("error.message", containsString("token id 18446744073709551621 is outside the vocabulary"));
    }

    @Test
    void streamingChatIsOpenAisWireFormat() throws Exception {
        String body = api().body(chat("Once upon a time", "\"max_tokens\":12,\"temperature\":0,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true}"))
                .post("/v1/chat/completions").then().statusCode(200)
                .contentType(startsWith("text/event-stream")).extract().asString();
        List<String> payloads = SseEvents.parse(body);
        JsonNode first = JSON.readTree(payloads.getFirst());
        assertEquals("chat.completion.chunk", first.get("object").asText());
        assertEquals("assistant", first.at("/choices/0/delta/role").asText());
        StringBuilder text = new StringBuilder();
        String finish = null;
        for (String p : payloads.subList(0, payloads.size() - 1)) {
            JsonNode chunk = JSON.readTree(p);
            assertEquals(first.get("id"), chunk.get("id"), "one id for the whole stream");
            assertTrue(chunk.has("usage") && chunk.get("usage").isNull(), "usage: null on every chunk but the last");
            text.append(chunk.at("/choices/0/delta/content").asText(""));
            if (!chunk.at("/choices/0/finish_reason").isNull()) {
                finish = chunk.at("/choices/0/finish_reason").asText();
            }
        }
        JsonNode usage = JSON.readTree(payloads.getLast());
        assertTrue(usage.get("choices").isEmpty(), "the usage chunk has empty choices");
        assertEquals(12, usage.at("/usage/completion_tokens").asInt());
        assertEquals("length", finish);
        assertEquals(content(chat("Once upon a time", "\"max_tokens\":12,\"temperature\":0")), text.toString(),
                "streamed text equals the non-streamed text");
    }

    @Test
    void streamingCompletionsWithoutUsageHasNoUsageField() throws Exception {
        String body = api().body(completion("Lily", "\"max_tokens\":6,\"stream\":true")).post("/v1/completions")
                .then().statusCode(200).extract().asString();
        List<String> payloads = SseEvents.parse(body);
        for (String p : payloads) {
            JsonNode chunk = JSON.readTree(p);
            assertEquals("text_completion", chunk.get("object").asText());
            assertFalse(chunk.has("usage"));
        }
        assertEquals("length", JSON.readTree(payloads.getLast()).at("/choices/0/finish_reason").asText());
    }

    @Test
    void keysAreRequiredOnTheApiButNotOnHealth() {
        RestAssured.given().contentType(ContentType.JSON).body(chat("Hi", "")).post("/v1/chat/completions").then()
                .statusCode(401).body("error.code", equalTo("invalid_api_key"));
        RestAssured.given().header("Authorization", "Bearer wrong").get("/v1/models").then().statusCode(401)
                .body("error.message", equalTo("Incorrect API key provided."));
        RestAssured.given().header("Authorization", "Basic dGVzdC1rZXk6").get("/v1/models").then().statusCode(401);
        // configured only as its sha256
        RestAssured.given().header("Authorization", "Bearer second-key").get("/v1/models").then().statusCode(200);
        RestAssured.given().contentType(ContentType.JSON).body(completion("Hi", "")).post("/fn-completions").then()
                .statusCode(401);
        RestAssured.get("/q/health/ready").then().statusCode(200).body("checks[0].data.phase", equalTo("ready"));
        RestAssured.get("/q/health/started").then().statusCode(200).body("checks.name", contains("model-loaded"));
        // every check once: the startup check is not the readiness check again
        RestAssured.get("/q/health").then().statusCode(200)
                .body("checks.name", containsInAnyOrder("process", "model-loaded", "model"));
        RestAssured.get("/q/health/live").then().statusCode(200);
        RestAssured.get("/ping").then().statusCode(200);
        RestAssured.get("/q/openapi").then().statusCode(200).body(containsString("/v1/chat/completions"));
    }

    @Test
    void funqyFunctionsAnswerWithTheSameShapes() {
        String rest = api().body(completion("Once upon a time", "\"max_tokens\":10,\"temperature\":0"))
                .post("/v1/completions").then().statusCode(200).extract().path("choices[0].text");
        api().body(completion("Once upon a time", "\"max_tokens\":10,\"temperature\":0")).post("/fn-completions")
                .then().statusCode(200).body("object", equalTo("text_completion")).body("choices[0].text", equalTo(rest));
        api().body(chat("Once upon a time", "\"max_tokens\":4")).post("/fn-chat-completions").then().statusCode(200)
                .body("object", equalTo("chat.completion")).body("usage.completion_tokens", equalTo(4));
        api().body(chat("Hi", "\"temperature\":9")).post("/fn-chat-completions").then().statusCode(400)
                .body("error.param", equalTo("temperature"));
        api().body(chat("Hi", "\"stream\":true")).post("/fn-chat-completions").then().statusCode(400)
                .body("error.param", equalTo("stream"));
        api().body("{nope").post("/fn-completions").then().statusCode(400).body("error.type", equalTo("invalid_request_error"));
    }

    @Test
    void errorsKeepOpenAisShapeWithoutStackTraces() {
        api().get("/v1/nothing-here").then().statusCode(404).body("error.code", equalTo("unknown_url"));
        api().get("/v1/chat/completions").then().statusCode(405).body("error.type", equalTo("invalid_request_error"));
        api().body("x".repeat(70_000)).post("/v1/completions").then().statusCode(413)
                .body("error.code", equalTo("request_too_large"));
        String body = api().body("{\"model\":").post("/v1/completions").then().statusCode(400).extract().asString();
        assertFalse(body.contains("\tat "), body);
    }

    @Test
    void metricsCountRequestsTokensAndLatencies() {
        api().body(completion("Once upon a time", "\"max_tokens\":3")).post("/v1/completions").then().statusCode(200);
        String metrics = RestAssured.get("/q/metrics").then().statusCode(200).extract().asString();
        for (String name : List.of("http_server_requests_seconds_count", "zse_prompt_tokens_total",
                "zse_generated_tokens_total", "zse_time_to_first_token_seconds_bucket",
                "zse_inter_token_latency_seconds_bucket", "zse_queue_depth", "zse_running_sequences",
                "zse_model_load_seconds", "zse_kv_cache_bytes")) {
            assertTrue(metrics.contains(name), name + " is exported");
        }
        assertTrue(metrics.contains("status=\"200\""), "requests by status");
        assertFalse(metrics.contains("zse_queue_depth NaN"));
    }
}
