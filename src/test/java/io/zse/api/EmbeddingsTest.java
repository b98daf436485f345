package io.zse.api;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.openai.OpenAiEmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.inmemory.InMemoryEmbeddingStore;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** /v1/embeddings through REST Assured, the OpenAI Java SDK and LangChain4j's embedding model and store. */
@QuarkusTest
class EmbeddingsTest extends ApiTestBase {
    private static final String[] TEXTS = {"The little dog ran to the park.", "Lily likes her red ball.",
            "Once upon a time there was a big bear."};
    private static final int DIMENSIONS = 128; // the demo model's hidden size

    private static String request(String input, String extra) {
        return "{\"model\":\"" + MODEL + "\",\"input\":" + input + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    @Test
    void aBatchEmbedsEachInputAsItWouldAloneAsUnitVectors() {
        JsonPath batch = api().body(request("[\"" + String.join("\",\"", TEXTS) + "\"]", ""))
                .post("/v1/embeddings").then().statusCode(200)
                .body("object", equalTo("list")).body("model", equalTo(MODEL))
                .body("data.size()", equalTo(3)).body("data[0].object", equalTo("embedding"))
                .extract().jsonPath();
        int tokens = 0;
        for (int i = 0; i < TEXTS.length; i++) {
            assertEquals(i, batch.getInt("data[" + i + "].index"));
            float[] vector = floats(batch.getList("data[" + i + "].embedding", Float.class));
            assertEquals(DIMENSIONS, vector.length);
            assertEquals(1.0, dot(vector, vector), 1e-4, "unit length");
            JsonPath alone = api().body(request("\"" + TEXTS[i] + "\"", "")).post("/v1/embeddings").then()
                    .statusCode(200).extract().jsonPath();
            float[] single = floats(alone.getList("data[0].embedding", Float.class));
            for (int d = 0; d < DIMENSIONS; d++) {
                assertEquals(single[d], vector[d], 1e-6, "text " + i + " dimension " + d);
            }
            tokens += alone.getInt("usage.prompt_tokens");
        }
        assertEquals(tokens, batch.getInt("usage.prompt_tokens"));
        assertEquals(tokens, batch.getInt("usage.total_tokens"));
        assertNotEquals(batch.getList("data[0].embedding"), batch.getList("data[1].embedding"));

        // base64: the same floats, little-endian float32
        String encoded = api().body(request("\"" + TEXTS[0] + "\"", "\"encoding_format\":\"base64\""))
                .post("/v1/embeddings").then().statusCode(200).extract().jsonPath().getString("data[0].embedding");
        ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(encoded)).order(ByteOrder.LITTLE_ENDIAN);
        float[] first = floats(batch.getList("data[0].embedding", Float.class));
        assertEquals(DIMENSIONS * 4, bytes.remaining());
        for (int d = 0; d < DIMENSIONS; d++) {
            assertEquals(first[d], bytes.getFloat(), 0f);
        }
        // token ids embed like the text they spell
        api().body(request("[[1, 80, 147], [1, 200]]", "")).post("/v1/embeddings").then().statusCode(200)
                .body("data.size()", equalTo(2)).body("usage.prompt_tokens", equalTo(5));
    }

    @Test
    void openAiSdkReadsItsDefaultBase64Encoding() {
        OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY).maxRetries(0).build();
        CreateEmbeddingResponse response = client.embeddings().create(EmbeddingCreateParams.builder().model(MODEL)
                .inputOfArrayOfStrings(List.of(TEXTS)).build());
        assertEquals(3, response.data().size());
        for (int i = 0; i < 3; i++) {
            assertEquals(i, response.data().get(i).index());
            List<Float> vector = response.data().get(i).embedding();
            assertEquals(DIMENSIONS, vector.size());
            assertEquals(1.0, vector.stream().mapToDouble(v -> v * v).sum(), 1e-4);
        }
    }

    @Test
    void langChain4jEmbeddingStoreFindsTheClosestText() {
        OpenAiEmbeddingModel model = OpenAiEmbeddingModel.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY)
                .modelName(MODEL).maxRetries(0).build();
        assertEquals(DIMENSIONS, model.dimension());
        InMemoryEmbeddingStore<TextSegment> store = new InMemoryEmbeddingStore<>();
        List<TextSegment> segments = List.of(TEXTS).stream().map(TextSegment::from).toList();
        List<Embedding> embeddings = model.embedAll(segments).content();
        store.addAll(embeddings, segments);
        // each stored text is its own nearest neighbour, with a cosine similarity of 1
        for (String text : TEXTS) {
            List<EmbeddingMatch<TextSegment>> matches = store.search(EmbeddingSearchRequest.builder()
                    .queryEmbedding(model.embed(text).content()).maxResults(3).build()).matches();
            assertEquals(text, matches.getFirst().embedded().text());
            assertEquals(1.0, matches.getFirst().score(), 1e-4);
            assertEquals(3, matches.size());
        }
    }

    private static float[] floats(List<Float> values) {
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }

    private static double dot(float[] a, float[] b) {
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += (double) a[i] * b[i];
        }
        return sum;
    }
}
