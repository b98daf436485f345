package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * vLLM's ignore_eos, min_tokens, stop_token_ids and include_stop_str_in_output on the demo model, whose greedy story
 * after "One day" ends (its end marker) after 125 tokens, the token just before the marker being "." (id 10).
 */
@QuarkusTest
class EndConditionsTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "One day";
    private static final int PERIOD = 10;

    private static JsonPath complete(String extra) {
        return api().body(completion(PROMPT, "\"temperature\":0," + extra)).post("/v1/completions").then()
                .statusCode(200).extract().jsonPath();
    }

    /** The story as the model ends it by itself. */
    private static String story() {
        JsonPath r = complete("\"max_tokens\":300");
        assertEquals("stop", r.getString("choices[0].finish_reason"));
        assertEquals(125, r.getInt("usage.completion_tokens"));
        return r.getString("choices[0].text");
    }

    @Test
    void ignoreEosGoesOnToMaxTokens() {
        String story = story();
        JsonPath r = complete("\"max_tokens\":200,\"ignore_eos\":true");
        assertEquals("length", r.getString("choices[0].finish_reason"));
        assertEquals(200, r.getInt("usage.completion_tokens"));
        String text = r.getString("choices[0].text");
        assertTrue(text.startsWith(story) && text.length() > story.length(), text);

        JsonPath chat = api().body(chat(PROMPT, "\"temperature\":0,\"max_tokens\":200,\"ignore_eos\":true"))
                .post("/v1/chat/completions").then().statusCode(200).extract().jsonPath();
        assertEquals("length", chat.getString("choices[0].finish_reason"));
        assertEquals(200, chat.getInt("usage.completion_tokens"));
    }

    @Test
    void minTokensPushesTheEndLater() {
        String story = story();
        JsonPath r = complete("\"max_tokens\":300,\"min_tokens\":150");
        assertTrue(r.getInt("usage.completion_tokens") >= 150, r.prettify());
        String text = r.getString("choices[0].text");
        assertTrue(text.startsWith(story) && text.length() > story.length(), text);
        // streamed alike
        assertEquals(text, streamed("\"max_tokens\":300,\"min_tokens\":150"));
    }

    @Test
    void aStopTokenIdEndsTheOutputWithoutItsText() {
        String story = story();
        JsonPath r = complete("\"max_tokens\":300,\"stop_token_ids\":[" + PERIOD + "]");
        assertEquals("stop", r.getString("choices[0].finish_reason"));
        assertEquals(story, r.getString("choices[0].text") + ".");
        assertEquals(121, r.getInt("usage.completion_tokens")); // the stop token is counted, as vLLM counts it
        assertEquals(r.getString("choices[0].text"), streamed("\"max_tokens\":300,\"stop_token_ids\":[10]"));
        // its text is kept on request
        assertEquals(story, complete("\"max_tokens\":300,\"stop_token_ids\":[10],\"include_stop_str_in_output\":true")
                .getString("choices[0].text"));
        // min_tokens holds it off (the story's other "."s are merged into longer tokens)
        assertEquals("length", complete("\"max_tokens\":121,\"min_tokens\":121,"
                + "\"stop_token_ids\":[10]").getString("choices[0].finish_reason"));
    }

    @Test
    void includeStopStrInOutputKeepsTheMatchedStopString() {
        String story = story();
        int at = story.indexOf("little");
        api().body(completion(PROMPT, "\"temperature\":0,\"stop\":[\"little\"],\"include_stop_str_in_output\":true"))
                .post("/v1/completions").then().statusCode(200)
                .body("choices[0].text", equalTo(story.substring(0, at + "little".length())))
                .body("choices[0].finish_reason", equalTo("stop"));
        api().body(chat(PROMPT, "\"temperature\":0,\"stop\":\"little\",\"include_stop_str_in_output\":true"))
                .post("/v1/chat/completions").then().statusCode(200)
                .body("choices[0].message.content", equalTo(story.substring(0, at + "little".length())));
        assertEquals(story.substring(0, at + "little".length()),
                streamed("\"stop\":\"little\",\"include_stop_str_in_output\":true"));
    }

    /** The text of a streamed greedy completion of the prompt. */
    private static String streamed(String extra) {
        String body = api().body(completion(PROMPT, "\"temperature\":0,\"stream\":true," + extra))
                .post("/v1/completions").then().statusCode(200).extract().asString();
        StringBuilder text = new StringBuilder();
        for (String payload : SseEvents.parse(body)) {
            try {
                JsonNode chunk = JSON.readTree(payload);
                for (JsonNode choice : chunk.get("choices")) {
                    text.append(choice.get("text").asText());
                }
            } catch (Exception e) {
                throw new AssertionError(payload, e);
            }
        }
        return text.toString();
    }
}
