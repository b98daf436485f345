package io.zse.api;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The clients users bring: the official OpenAI Java SDK and LangChain4j, streaming and not. */
@QuarkusTest
class RealClientsTest extends ApiTestBase {
    private static final String PROMPT = "Once upon a time";

    private OpenAIClient openAi() {
        return OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY).maxRetries(0).build();
    }

    private static ChatCompletionCreateParams.Builder chatParams() {
        return ChatCompletionCreateParams.builder().model(MODEL).addUserMessage(PROMPT).maxCompletionTokens(12)
                .temperature(0.0);
    }

    @Test
    void openAiSdkChatStreamedAndNot() {
        OpenAIClient client = openAi();
        ChatCompletion completion = client.chat().completions().create(chatParams().build());
        String text = completion.choices().getFirst().message().content().orElseThrow();
        assertFalse(text.isEmpty());
        assertEquals(12, completion.usage().orElseThrow().completionTokens());

        StringBuilder streamed = new StringBuilder();
        long[] usage = {-1};
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
                chatParams().streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build()).build())) {
            stream.stream().forEach(chunk -> {
                chunk.choices().forEach(c -> c.delta().content().ifPresent(streamed::append));
                chunk.usage().ifPresent(u -> usage[0] = u.completionTokens());
            });
        }
        assertEquals(text, streamed.toString());
        assertEquals(12, usage[0]);
    }

    @Test
    void openAiSdkCompletions() {
        Completion completion = openAi().completions().create(CompletionCreateParams.builder().model(MODEL)
                .prompt(PROMPT).maxTokens(8).temperature(0.0).build());
        assertEquals("length", completion.choices().getFirst().finishReason().asString());
        assertFalse(completion.choices().getFirst().text().isEmpty());
    }

    @Test
    void langChain4jChatStreamedAndNot() throws Exception {
        String text = OpenAiChatModel.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY).modelName(MODEL)
                .temperature(0.0).maxTokens(12).maxRetries(0).build().chat(PROMPT);
        assertFalse(text.isEmpty());

        StringBuilder partial = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        OpenAiStreamingChatModel.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY).modelName(MODEL).temperature(0.0)
                .maxTokens(12).build().chat(PROMPT, new StreamingChatResponseHandler() {
                    @Override
                    public void onPartialResponse(String token) {
                        partial.append(token);
                    }

                    @Override
                    public void onCompleteResponse(ChatResponse response) {
                        done.complete(response);
                    }

                    @Override
                    public void onError(Throwable error) {
                        done.completeExceptionally(error);
                    }
                });
        ChatResponse response = done.get(60, TimeUnit.SECONDS);
        assertEquals(text, partial.toString());
        assertEquals(text, response.aiMessage().text());
        assertTrue(response.tokenUsage().outputTokenCount() == 12, "usage reached LangChain4j");
    }
}
