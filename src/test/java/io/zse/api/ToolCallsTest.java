package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.openai.OpenAiChatModel;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.zse.tokenizer.Tokenizer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tool calls over HTTP against a model whose template is Qwen3's (Hermes-style calls): forced calls are always valid
 * calls, streamed as OpenAI streams them, and the conversation that follows renders exactly as transformers renders it.
 */
@QuarkusTest
@TestProfile(QwenToolModel.Profile.class)
class ToolCallsTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String WEATHER_PARAMETERS = """
            {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]},
             "days": {"type": "integer"}}, "required": ["city"]}""";
    private static final String TOOLS = "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
            + "\"description\":\"Weather in a city\",\"parameters\":" + WEATHER_PARAMETERS + "}},"
            + "{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\","
            + "\"properties\":{\"zone\":{\"type\":\"string\"}},\"required\":[\"zone\"],\"additionalProperties\":false}}}]";

    private static String body(String extra) {
        return "{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Weather?\"}],"
                + "\"tools\":" + TOOLS + "," + extra + "}";
    }

    @Test
    void requiredChoiceAlwaysYieldsValidCalls() throws Exception {
        Response r = api().body(body("\"tool_choice\":\"required\",\"parallel_tool_calls\":false,\"n\":3,"
                + "\"temperature\":1.0,\"seed\":1,\"max_tokens\":150")).post("/v1/chat/completions");
        r.then().statusCode(200);
        for (int i = 0; i < 3; i++) {
            String at = "choices[" + i + "].";
            assertEquals("tool_calls", r.jsonPath().getString(at + "finish_reason"));
            assertEquals(null, r.jsonPath().getString(at + "message.content"));
            List<Map<String, Object>> calls = r.jsonPath().getList(at + "message.tool_calls");
            assertEquals(1, calls.size());
            for (int c = 0; c < calls.size(); c++) {
                String call = at + "message.tool_calls[" + c + "].";
                assertTrue(r.jsonPath().getString(call + "id").startsWith("call_"));
                assertEquals("function", r.jsonPath().getString(call + "type"));
                checkArguments(r.jsonPath().getString(call + "function.name"),
                        r.jsonPath().getString(call + "function.arguments"));
            }
        }
    }

    /** A function declared without parameters takes none (OpenAI): its forced calls' arguments are {} every time. */
    @Test
    void aFunctionWithoutParametersIsCalledWithNoArguments() {
        String tools = "[{\"type\":\"function\",\"function\":{\"name\":\"now\"}}]";
        Response r = api().body("{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[{\"role\":\"user\","
                + "\"content\":\"Time?\"}],\"tools\":" + tools + ",\"tool_choice\":\"required\","
                + "\"parallel_tool_calls\":false,\"n\":3,\"temperature\":1.0,\"seed\":2,\"max_tokens\":60}")
                .post("/v1/chat/completions");
        r.then().statusCode(200);
        for (int i = 0; i < 3; i++) {
            String call = "choices[" + i + "].message.tool_calls[0].function.";
            assertEquals("now", r.jsonPath().getString(call + "name"));
            assertEquals("{}", r.jsonPath().getString(call + "arguments").replaceAll("\\s", ""), "choice " + i);
        }
    }

    @Test
    void namedChoiceWithoutParallelCallsMakesExactlyThatOneCall() throws Exception {
        Response r = api().body(body("\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}},"
                + "\"parallel_tool_calls\":false,\"temperature\":1.0,\"seed\":4,\"max_tokens\":100"))
                .post("/v1/chat/completions");
        r.then().statusCode(200).body("choices[0].finish_reason", equalTo("tool_calls"))
                .body("choices[0].message.tool_calls.size()", equalTo(1))
                .body("choices[0].message.tool_calls[0].function.name", equalTo("get_time"));
        checkArguments("get_time", r.jsonPath().getString("choices[0].message.tool_calls[0].function.arguments"));
    }

    @Test
    void aStreamedCallIsNamedThenGivenItsArguments() throws Exception {
        String sse = api().body(body("\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},"
                + "\"stream\":true,\"seed\":8,\"max_tokens\":100")).post("/v1/chat/completions").then().statusCode(200)
                .extract().asString();
        List<JsonNode> deltas = new ArrayList<>();
        for (String event : SseEvents.parse(sse)) {
            if (!event.equals("[DONE]")) {
                JsonNode delta = JSON.readTree(event).path("choices").path(0).path("delta");
                if (delta.has("tool_calls")) {
                    deltas.add(delta.get("tool_calls"));
                }
            }
        }
        assertEquals(2, deltas.size(), deltas.toString());
        JsonNode head = deltas.get(0).get(0);
        assertEquals(0, head.get("index").asInt());
        assertTrue(head.get("id").asText().startsWith("call_"));
        assertEquals("function", head.get("type").asText());
        assertEquals("get_weather", head.path("function").path("name").asText());
        assertEquals("", head.path("function").path("arguments").asText());
        JsonNode arguments = deltas.get(1).get(0);
        assertEquals(0, arguments.get("index").asInt());
        assertFalse(arguments.has("id"));
        checkArguments("get_weather", arguments.path("function").path("arguments").asText());
        assertTrue(sse.contains("\"finish_reason\":\"tool_calls\""), sse);
    }

    @Test
    void openAiSdkStreamsToolCallsByIndex() throws Exception {
        OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY).maxRetries(0).build();
        ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(QwenToolModel.ID)
                .addUserMessage("Weather in Oslo?")
                .addTool(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder().name("get_weather")
                        .parameters(FunctionParameters.builder()
                                .putAllAdditionalProperties(properties(WEATHER_PARAMETERS)).build()).build()).build())
                .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED).temperature(1.0).seed(3L)
                .maxCompletionTokens(150).build();

        ChatCompletion whole = client.chat().completions().create(params);
        ChatCompletionMessageFunctionToolCall first = whole.choices().getFirst().message().toolCalls().orElseThrow()
                .getFirst().asFunction();
        checkArguments(first.function().name(), first.function().arguments());

        Map<Long, StringBuilder> names = new TreeMap<>();
        Map<Long, StringBuilder> arguments = new TreeMap<>();
        Map<Long, String> ids = new TreeMap<>();
        List<String> finishes = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
            stream.stream().forEach(chunk -> chunk.choices().forEach(c -> {
                c.delta().toolCalls().ifPresent(calls -> calls.forEach(call -> {
                    call.id().ifPresent(id -> ids.put(call.index(), id));
                    call.function().ifPresent(f -> {
                        f.name().ifPresent(n -> names.computeIfAbsent(call.index(), k -> new StringBuilder()).append(n));
                        f.arguments().ifPresent(a -> arguments.computeIfAbsent(call.index(), k -> new StringBuilder())
                                .append(a));
                    });
                }));
                c.finishReason().ifPresent(f -> finishes.add(f.asString()));
            }));
        }
        // parallel calls allowed: a random model goes on writing calls until the budget makes it close the last one
        assertEquals(1, finishes.size());
        assertTrue(List.of("tool_calls", "length").contains(finishes.getFirst()), finishes.toString());
        assertFalse(names.isEmpty());
        assertEquals(names.keySet(), ids.keySet());
        long expectedIndex = 0;
        for (long index : names.keySet()) {
            assertEquals(expectedIndex++, index, "calls are numbered from 0");
            assertTrue(ids.get(index).startsWith("call_"));
            checkArguments(names.get(index).toString(), arguments.get(index).toString());
        }
        // the same seed gives the same calls, streamed or not
        assertEquals(first.function().name(), names.get(0L).toString());
        assertEquals(first.function().arguments(), arguments.get(0L).toString());
    }

    @Test
    void aToolRoundTripRendersAsTransformersDoes() throws Exception {
        JsonNode golden = JSON.readTree(getClass().getResourceAsStream("/tool-calls/prompts.json"));
        JsonNode round = golden.path("cases").path("round_trip");
        String body = "{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":" + round.get("messages") + ",\"tools\":"
                + round.get("tools") + ",\"max_tokens\":1}";
        int promptTokens = api().body(body).post("/v1/chat/completions").then().statusCode(200)
                .extract().path("usage.prompt_tokens");
        Tokenizer tokenizer = Tokenizer.load(QwenToolModel.DIR.resolve("tokenizer").resolve("tokenizer.json"));
        String expected = golden.path("expected").path("qwen3__round_trip").asText();
        assertEquals(tokenizer.encode(expected, false).length, promptTokens);
    }

    @Test
    void autoChoiceAnswersWithTextOrCalls() {
        api().body(body("\"tool_choice\":\"auto\",\"max_tokens\":5,\"seed\":2")).post("/v1/chat/completions")
                .then().statusCode(200).body("choices[0].message.role", equalTo("assistant"));
        api().body(body("\"tool_choice\":\"none\",\"max_tokens\":5,\"seed\":2")).post("/v1/chat/completions")
                .then().statusCode(200).body("choices[0].message.tool_calls", nullValue())
                .body("choices[0].finish_reason", equalTo("length"));
    }

    @Test
    void badToolRequestsAreRefused() {
        api().body(body("\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"nope\"}}"))
                .post("/v1/chat/completions").then().statusCode(400).body("error.param", equalTo("tool_choice"))
                .body("error.message", containsString("'nope'"));
        api().body(body("\"response_format\":{\"type\":\"json_object\"}")).post("/v1/chat/completions")
                .then().statusCode(400).body("error.param", equalTo("response_format"));
        api().body("{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
                + "\"tool_choice\":\"required\"}").post("/v1/chat/completions").then().statusCode(400)
                .body("error.message", containsString("only allowed when 'tools' are specified"));
        api().body("{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[{\"role\":\"tool\",\"content\":\"x\"}]}")
                .post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", startsWith("messages[0].tool_call_id"));
    }

    private static Map<String, JsonValue> properties(String json) throws Exception {
        Map<String, JsonValue> out = new TreeMap<>();
        JSON.readTree(json).fields().forEachRemaining(e -> out.put(e.getKey(), JsonValue.fromJsonNode(e.getValue())));
        return out;
    }

    /** The call names one of the tools and its arguments validate against that tool's parameters. */
    private static void checkArguments(String name, String arguments) throws Exception {
        JsonNode tools = JSON.readTree(TOOLS);
        JsonNode schema = null;
        for (JsonNode t : tools) {
            if (t.path("function").path("name").asText().equals(name)) {
                schema = t.path("function").path("parameters");
            }
        }
        assertTrue(schema != null, "unknown function " + name);
        JsonNode value = JSON.readTree(arguments);
        var errors = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema).validate(value);
        assertTrue(errors.isEmpty(), arguments + " -> " + errors);
    }

    /** LangChain4j's OpenAI chat model: a required call comes back as a tool execution request, and its result goes on. */
    @Test
    void langChain4jGetsTheCallAndSendsTheResultBack() throws Exception {
        OpenAiChatModel model = OpenAiChatModel.builder().baseUrl(baseUrl() + "/v1").apiKey(KEY)
                .modelName(QwenToolModel.ID).maxTokens(96).seed(5).maxRetries(0).build();
        ToolSpecification weather = ToolSpecification.builder().name("get_weather").description("Weather in a city")
                .parameters(JsonObjectSchema.builder().addStringProperty("city").required("city").build()).build();
        var question = UserMessage.from("Weather in Paris?");
        var response = model.chat(ChatRequest.builder().messages(question).toolSpecifications(weather)
                .toolChoice(ToolChoice.REQUIRED).build());
        assertEquals(1, response.aiMessage().toolExecutionRequests().size(), response.toString());
        var call = response.aiMessage().toolExecutionRequests().getFirst();
        assertEquals("get_weather", call.name());
        assertTrue(JSON.readTree(call.arguments()).get("city").isTextual(), call.arguments());

        var answer = model.chat(ChatRequest.builder().messages(question, response.aiMessage(),
                ToolExecutionResultMessage.from(call, "sunny, 21 C")).toolSpecifications(weather).build());
        assertTrue(answer.aiMessage().hasToolExecutionRequests() || answer.aiMessage().text() != null, answer.toString());
    }
}
