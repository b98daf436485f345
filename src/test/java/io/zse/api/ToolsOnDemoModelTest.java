package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

/**
 * The demo model (a base model without a chat template, a 2K vocabulary without '{'): what it cannot do is refused
 * with a reason, never guessed at.
 */
@QuarkusTest
class ToolsOnDemoModelTest extends ApiTestBase {
    private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";

    @Test
    void toolsNeedATemplateWithAToolCallFormat() {
        api().body(chat("hi", TOOLS)).post("/v1/chat/completions").then().statusCode(400)
                .body("error.code", equalTo("unsupported_tool_format"))
                .body("error.message", containsString("no tool-call format"));
        // with tool_choice none the tools are only rendered (this template ignores them) and the reply is text
        api().body(chat("hi", TOOLS + ",\"tool_choice\":\"none\",\"max_tokens\":2")).post("/v1/chat/completions")
                .then().statusCode(200).body("choices[0].finish_reason", equalTo("length"));
    }

    @Test
    void aVocabularyThatCannotWriteJsonIsRefused() {
        api().body(chat("hi", "\"response_format\":{\"type\":\"json_object\"}")).post("/v1/chat/completions")
                .then().statusCode(400).body("error.code", equalTo("unsupported_vocabulary"))
                .body("error.param", equalTo("response_format"));
    }
}
