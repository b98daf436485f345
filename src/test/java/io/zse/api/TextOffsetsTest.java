package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * text_offset counts characters as OpenAI's and vLLM's Python servers do (code points), not UTF-16 units: after an
 * emoji, which is two units, a client slicing the text by an offset still lands on its token. On the Qwen3 tokenizer,
 * whose bytes-level vocabulary spells any emoji (TinyStories' has none: they become unknown tokens).
 */
@QuarkusTest
@TestProfile(QwenToolModel.Profile.class)
class TextOffsetsTest extends ApiTestBase {
    @Test
    void offsetsCountCharactersNotUtf16Units() {
        String prompt = "A cat 👋🏽 and a dog 🤖 ran 你好 home";
        JsonPath r = api().body("{\"model\":\"" + QwenToolModel.ID + "\",\"prompt\":\"" + prompt + "\","
                + "\"max_tokens\":2,\"temperature\":0,\"echo\":true,\"logprobs\":1}")
                .post("/v1/completions").then().statusCode(200).extract().jsonPath();
        String text = r.getString("choices[0].text");
        assertTrue(text.startsWith(prompt), text);
        List<String> tokens = r.getList("choices[0].logprobs.tokens");
        List<Integer> offsets = r.getList("choices[0].logprobs.text_offset");
        int promptTokens = r.getInt("usage.prompt_tokens");
        int checked = 0;
        for (int i = 0; i < promptTokens; i++) {
            String word = tokens.get(i).strip();
            if (word.matches("[a-z]+")) { // whole words: an emoji's byte tokens decoded alone are not its text
                String at = text.substring(text.offsetByCodePoints(0, offsets.get(i)));
                assertTrue(at.strip().startsWith(word), "'" + word + "' at character " + offsets.get(i) + ": " + at);
                checked++;
            }
        }
        assertEquals(6, checked, "cat, and, a, dog, ran, home: " + tokens);
        assertEquals(prompt.codePointCount(0, prompt.length()), offsets.get(promptTokens),
                "the first generated token begins after the prompt's characters");
    }
}
