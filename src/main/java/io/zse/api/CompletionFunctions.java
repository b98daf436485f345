package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.funqy.Funq;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;

import java.util.Set;

/**
 * The same chat and text completions as Funqy functions, for event- and function-style invocation (Knative, plain
 * POST /fn-...). Non-streaming only; the request and response bodies are OpenAI's. The API-key check and rate limits
 * run before Funqy (see {@link OpenAiRoutes}).
 */
public class CompletionFunctions {
    static final String CHAT = "fn-chat-completions";
    static final String TEXT = "fn-completions";
    /** Where Funqy serves them (POST only; see {@link OpenAiRoutes}). */
    static final Set<String> PATHS = Set.of("/" + CHAT, "/" + TEXT);

    @Inject
    Completions completions;

    @Inject
    CurrentVertxRequest request;

    @Funq(CHAT)
    public Uni<ObjectNode> chatCompletions(JsonNode body) {
        return run(body, true);
    }

    @Funq(TEXT)
    public Uni<ObjectNode> textCompletions(JsonNode body) {
        return run(body, false);
    }

    private Uni<ObjectNode> run(JsonNode body, boolean chat) {
        if (body != null && body.path("stream").asBoolean(false)) {
            return Uni.createFrom().failure(ApiException.invalid(
                    "functions do not stream; use POST /v1" + (chat ? "/chat" : "") + "/completions for stream: true", "stream"));
        }
        JsonSink sink = new JsonSink();
        CompletionRun run;
        try {
            run = completions.start(body, chat, request.getCurrent().get(OpenAiRoutes.CALLER),
                    request.getCurrent().response()::closed, job -> sink);
        } catch (ApiException e) {
            return Uni.createFrom().failure(e);
        }
        OpenAiRoutes.cancelWhenTheClientLeaves(request.getCurrent(), run);
        return Uni.createFrom().completionStage(sink.result);
    }
}
