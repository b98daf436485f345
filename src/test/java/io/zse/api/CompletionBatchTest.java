package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * /v1/completions with a batch of prompts (each its own choices, indexed prompt by prompt), echo with the prompt's
 * logprobs, and the demo model's stories ending cleanly at their spelled-out end marker.
 */
@QuarkusTest
class CompletionBatchTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] PROMPTS = {"Once upon a time", "The little dog", "Tom and Sue went to the park."};

    private static String batch(String extra) {
        return "{\"model\":\"" + MODEL + "\",\"prompt\":[\"" + String.join("\",\"", PROMPTS) + "\"]," + extra + "}";
    }

    @Test
    void eachPromptGetsItsOwnChoicesNumberedPromptByPrompt() {
        JsonPath batch = api().body(batch("\"max_tokens\":6,\"n\":2,\"temperature\":0.9,\"seed\":7"))
                .post("/v1/completions").then().statusCode(200).extract().jsonPath();
        assertEquals(6, batch.getList("choices").size());
        int promptTokens = 0;
        int completionTokens = 0;
        for (int p = 0; p < PROMPTS.length; p++) {
            // the same prompt alone, with the same seed, gives the same two choices
            JsonPath alone = api().body(completion(PROMPTS[p], "\"max_tokens\":6,\"n\":2,\"temperature\":0.9,\"seed\":7"))
                    .post("/v1/completions").then().statusCode(200).extract().jsonPath();
            promptTokens += alone.getInt("usage.prompt_tokens");
            completionTokens += alone.getInt("usage.completion_tokens");
            for (int i = 0; i < 2; i++) {
                assertEquals(p * 2 + i, batch.getInt("choices[" + (p * 2 + i) + "].index"));
                assertEquals(alone.getString("choices[" + i + "].text"), batch.getString("choices[" + (p * 2 + i) + "].text"),
                        "prompt " + p + " choice " + i);
            }
        }
        assertEquals(promptTokens, batch.getInt("usage.prompt_tokens"), "each prompt counted once");
        assertEquals(completionTokens, batch.getInt("usage.completion_tokens"));
        // token-id prompts batch the same way
        api().body("{\"model\":\"" + MODEL + "\",\"prompt\":[[1,80,147],[1,200]],\"max_tokens\":2,\"temperature\":0}")
                .post("/v1/completions").then().statusCode(200)
                .body("choices.size()", org.hamcrest.Matchers.equalTo(2))
                .body("usage.prompt_tokens", org.hamcrest.Matchers.equalTo(5));
    }

    @Test
    void aStreamedBatchSendsEveryChoiceItsIndexAndFinish() throws Exception {
        String body = api().body(batch("\"max_tokens\":5,\"temperature\":0,\"stream\":true,\"echo\":true,"
                        + "\"stream_options\":{\"include_usage\":true}"))
                .post("/v1/completions").then().statusCode(200).extract().asString();
        Streamed streamed = Streamed.of(body);
        Map<Integer, StringBuilder> texts = streamed.texts();
        Map<Integer, String> finishes = streamed.finishes();
        assertEquals(3, texts.size());
        int completionTokens = 0;
        for (int p = 0; p < PROMPTS.length; p++) {
            JsonPath alone = api().body(completion(PROMPTS[p], "\"max_tokens\":5,\"temperature\":0,\"echo\":true"))
                    .post("/v1/completions").then().statusCode(200).extract().jsonPath();
            assertEquals(alone.getString("choices[0].text"), texts.get(p).toString());
            assertTrue(texts.get(p).toString().startsWith(PROMPTS[p]), "echoed first");
            assertEquals(alone.getString("choices[0].finish_reason"), finishes.get(p));
            completionTokens += alone.getInt("usage.completion_tokens");
        }
        assertEquals(completionTokens, streamed.usage().get("completion_tokens").asInt());
    }

    /** A stream's offsets go on from chunk to chunk: they are the offsets the same request gets unstreamed. */
    @Test
    void streamedTextOffsetsAreTheUnstreamedOnes() throws Exception {
        String request = "\"max_tokens\":12,\"temperature\":0,\"echo\":true,\"logprobs\":1";
        JsonPath whole = api().body(completion("Once upon a time", request)).post("/v1/completions").then()
                .statusCode(200).extract().jsonPath();
        String body = api().body(completion("Once upon a time", request + ",\"stream\":true"))
                .post("/v1/completions").then().statusCode(200).extract().asString();
        List<Integer> streamed = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (String payload : SseEvents.parse(body)) {
            JsonNode c = JSON.readTree(payload).get("choices").get(0);
            text.append(c.get("text").asText());
            if (!c.get("logprobs").isNull()) {
                c.get("logprobs").get("text_offset").forEach(o -> streamed.add(o.asInt()));
            }
        }
        assertEquals(whole.getString("choices[0].text"), text.toString());
        assertEquals(whole.getList("choices[0].logprobs.text_offset"), streamed);
        assertTrue(streamed.getLast() > "Once upon a time".length(), "past the prompt: " + streamed);
    }

    @Test
    void echoWithLogprobsReportsThePromptTokensThenTheGenerated() {
        JsonPath r = api().body(completion("Once upon a time", "\"max_tokens\":3,\"temperature\":0,\"echo\":true,"
                + "\"logprobs\":2")).post("/v1/completions").then().statusCode(200).extract().jsonPath();
        int promptTokens = r.getInt("usage.prompt_tokens");
        List<String> tokens = r.getList("choices[0].logprobs.tokens");
        List<Float> logprobs = r.getList("choices[0].logprobs.token_logprobs");
        List<Map<String, Float>> top = r.getList("choices[0].logprobs.top_logprobs");
        List<Integer> offsets = r.getList("choices[0].logprobs.text_offset");
        assertEquals(promptTokens + 3, tokens.size());
        assertEquals("<|start_story|>", tokens.getFirst(), "the prompt's first token");
        assertNull(logprobs.getFirst(), "nothing before the first token to score it on");
        assertNull(top.getFirst());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(logprobs.get(i) <= 0, "logprob " + i);
            assertEquals(2, top.get(i).size(), "alternatives at " + i);
            // a token is at most as likely as the likeliest alternative there
            assertTrue(logprobs.get(i) <= top.get(i).values().stream().max(Float::compare).orElseThrow() + 1e-5);
        }
        // each offset points at its token in the text (a token decoded alone may lack the space it has there)
        String text = r.getString("choices[0].text");
        assertTrue(text.startsWith("Once upon a time"));
        assertEquals(List.of(0, 0), offsets.subList(0, 2), "the special first token writes nothing");
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(offsets.get(i) >= offsets.get(i - 1), "offsets grow: " + offsets);
            assertTrue(text.substring(offsets.get(i)).strip().startsWith(tokens.get(i).strip()),
                    "token " + i + " '" + tokens.get(i) + "' at " + offsets.get(i) + " of '" + text + "'");
        }
        // greedy: each generated token is the likeliest at its position
        for (int i = promptTokens; i < tokens.size(); i++) {
            float best = top.get(i).values().stream().max(Float::compare).orElseThrow();
            assertEquals(best, logprobs.get(i), 1e-5);
        }
    }

    /** lm-evaluation-harness scores text so (echo, logprobs, max_tokens 0); OpenAI and vLLM answer the prompt alone. */
    @Test
    void maxTokensZeroWithEchoAnswersThePromptAlone() throws Exception {
        JsonPath generated = api().body(completion(PROMPTS[0], "\"max_tokens\":3,\"temperature\":0,\"echo\":true,"
                + "\"logprobs\":1")).post("/v1/completions").then().statusCode(200).extract().jsonPath();
        int promptTokens = generated.getInt("usage.prompt_tokens");
        JsonPath r = api().body(completion(PROMPTS[0], "\"max_tokens\":0,\"echo\":true,\"logprobs\":1,\"n\":2"))
                .post("/v1/completions").then().statusCode(200).extract().jsonPath();
        for (int i = 0; i < 2; i++) {
            String choice = "choices[" + i + "].";
            assertEquals(PROMPTS[0], r.getString(choice + "text"));
            assertEquals("length", r.getString(choice + "finish_reason"));
            assertEquals(generated.getList("choices[0].logprobs.token_logprobs").subList(0, promptTokens),
                    r.getList(choice + "logprobs.token_logprobs"), "the prompt's logprobs, and nothing after them");
        }
        assertEquals(0, r.getInt("usage.completion_tokens"));
        assertEquals(promptTokens, r.getInt("usage.total_tokens"));

        JsonPath plain = api().body(batch("\"max_tokens\":0,\"echo\":true")).post("/v1/completions").then()
                .statusCode(200).extract().jsonPath();
        for (int p = 0; p < PROMPTS.length; p++) {
            assertEquals(PROMPTS[p], plain.getString("choices[" + p + "].text"));
            assertNull(plain.get("choices[" + p + "].logprobs"));
        }

        String body = api().body(batch("\"max_tokens\":0,\"echo\":true,\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true}")).post("/v1/completions").then().statusCode(200)
                .extract().asString();
        Streamed streamed = Streamed.of(body);
        for (int p = 0; p < PROMPTS.length; p++) {
            assertEquals(PROMPTS[p], streamed.texts().get(p).toString());
            assertEquals("length", streamed.finishes().get(p));
        }
        assertEquals(0, streamed.usage().get("completion_tokens").asInt());
    }

    @Test
    void demoStoriesStopAtTheirSpelledOutEndMarker() {
        // the demo model writes "<|end_story|>" as plain tokens when a story ends; the reply must stop there
        JsonPath r = api().body(chat("Once upon a time", "\"max_tokens\":400,\"temperature\":0"))
                .post("/v1/chat/completions").then().statusCode(200).extract().jsonPath();
        String text = r.getString("choices[0].message.content");
        System.out.println("demo story: " + text);
        assertFalse(text.contains("<|"), "no end marker, whole or in part: " + text);
        assertEquals("stop", r.getString("choices[0].finish_reason"), text);
    }

    /** A streamed completions batch put back together: each choice's text and finish, and the final usage. */
    private record Streamed(Map<Integer, StringBuilder> texts, Map<Integer, String> finishes, JsonNode usage) {
        static Streamed of(String body) throws Exception {
            Map<Integer, StringBuilder> texts = new HashMap<>();
            Map<Integer, String> finishes = new HashMap<>();
            JsonNode usage = null;
            for (String payload : SseEvents.parse(body)) {
                JsonNode chunk = JSON.readTree(payload);
                if (chunk.get("choices").isEmpty()) {
                    usage = chunk.get("usage");
                    continue;
                }
                JsonNode c = chunk.get("choices").get(0);
                texts.computeIfAbsent(c.get("index").asInt(), i -> new StringBuilder()).append(c.get("text").asText());
                if (!c.get("finish_reason").isNull()) {
                    finishes.put(c.get("index").asInt(), c.get("finish_reason").asText());
                }
            }
            return new Streamed(texts, finishes, usage);
        }
    }
}
