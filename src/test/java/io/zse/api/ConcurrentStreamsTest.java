package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** 32 streams at once through continuous batching: all complete, and greedy text equals each request run alone. */
@QuarkusTest
class ConcurrentStreamsTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] STARTS = {"Once upon a time", "Tom", "Lily had a red ball.", "The sun was hot",
            "One day, a girl named Sue", "Ben and his mom", "The little dog ran to the park and", "A big bird"};

    @Test
    void thirtyTwoConcurrentGreedyStreamsMatchTheSameRequestsAlone() throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            bodies.add(chat(STARTS[i % STARTS.length], "\"max_tokens\":" + (16 + 3 * i)
                    + ",\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
        }
        List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
        for (String body : bodies) {
            inFlight.add(client.sendAsync(request(body), HttpResponse.BodyHandlers.ofString()));
        }
        List<String> together = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> f : inFlight) {
            HttpResponse<String> response = f.get();
            assertEquals(200, response.statusCode(), response.body());
            together.add(streamedText(response.body()));
        }
        for (int i = 0; i < bodies.size(); i++) {
            HttpResponse<String> alone = client.send(request(bodies.get(i)), HttpResponse.BodyHandlers.ofString());
            assertEquals(streamedText(alone.body()), together.get(i), "stream " + i);
        }
    }

    private static HttpRequest request(String body) {
        return HttpRequest.newBuilder(URI.create(baseUrl() + "/v1/chat/completions"))
                .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
                .header("Accept", "text/event-stream").timeout(Duration.ofSeconds(120))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static String streamedText(String body) throws Exception {
        StringBuilder text = new StringBuilder();
        List<String> payloads = SseEvents.parse(body);
        for (String p : payloads) {
            JsonNode chunk = JSON.readTree(p);
            for (JsonNode choice : chunk.get("choices")) {
                text.append(choice.at("/delta/content").asText(""));
            }
        }
        JsonNode usage = JSON.readTree(payloads.getLast()).get("usage");
        return text + " |" + usage.get("completion_tokens").asInt();
    }
}
