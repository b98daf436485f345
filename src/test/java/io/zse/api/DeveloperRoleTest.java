package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * OpenAI treats a developer message as a system message. Qwen3's template never names the developer role and drops
 * such a message: the server gives it to the template as a system message, so its words reach the prompt.
 */
@QuarkusTest
@TestProfile(QwenToolModel.Profile.class)
class DeveloperRoleTest extends ApiTestBase {
    private static int promptTokens(String messages) {
        return api().body("{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[" + messages + "],\"max_tokens\":1}")
                .post("/v1/chat/completions").then().statusCode(200).extract().jsonPath()
                .getInt("usage.prompt_tokens");
    }

    private static int promptTokensAfter(String firstRole) {
        return promptTokens("{\"role\":\"" + firstRole + "\",\"content\":\"Answer in French.\"},"
                + "{\"role\":\"user\",\"content\":\"hi\"}");
    }

    @Test
    void aDeveloperMessageIsRenderedAsTheSystemMessage() {
        int system = promptTokensAfter("system");
        assertEquals(system, promptTokensAfter("developer"));
        int userAlone = promptTokens("{\"role\":\"user\",\"content\":\"hi\"}");
        assertEquals(true, system > userAlone, system + " tokens with the system message, " + userAlone + " without");
    }
}
