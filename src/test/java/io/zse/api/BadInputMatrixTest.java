package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.stream.Stream;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** Bad requests get the right 4xx in OpenAI's shape, naming the parameter; the server keeps serving afterwards. */
@QuarkusTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BadInputMatrixTest extends ApiTestBase {
    private static final String C = "/v1/chat/completions";
    private static final String T = "/v1/completions";
    private static final String E = "/v1/embeddings";
    private static final String MSG = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
    private static final String M = "\"model\":\"" + MODEL + "\"";

    static Stream<Arguments> badRequests() {
        return Stream.of(
                // path, body, status, param (null: none expected)
                Arguments.of(C, "", 400, null),
                Arguments.of(C, "{", 400, null),
                Arguments.of(C, "[1,2]", 400, null),
                Arguments.of(C, "\"text\"", 400, null),
                Arguments.of(C, "{" + MSG + "}", 400, "model"),
                Arguments.of(C, "{\"model\":42," + MSG + "}", 400, "model"),
                Arguments.of(C, "{\"model\":\"gpt-4\"," + MSG + "}", 404, "model"),
                Arguments.of(C, "{" + M + "}", 400, "messages"),
                Arguments.of(C, "{" + M + ",\"messages\":[]}", 400, "messages"),
                Arguments.of(C, "{" + M + ",\"messages\":\"hi\"}", 400, "messages"),
                Arguments.of(C, "{" + M + ",\"messages\":[42]}", 400, "messages[0]"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]}", 400, "messages[0].role"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"content\":\"x\"}]}", 400, "messages[0].role"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"role\":\"user\"}]}", 400, "messages[0].content"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400, "messages[0].content"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]}", 400, "messages[0].content[0]"),
                Arguments.of(C, "{" + M + ",\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{}]}]}", 400, "messages[0].tool_calls[0]"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"temperature\":-1}", 400, "temperature"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"temperature\":3}", 400, "temperature"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"temperature\":\"hot\"}", 400, "temperature"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"top_p\":0}", 400, "top_p"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"top_p\":1.5}", 400, "top_p"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"top_k\":-2}", 400, "top_k"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"top_k\":2.5}", 400, "top_k"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"min_p\":2}", 400, "min_p"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"repetition_penalty\":0}", 400, "repetition_penalty"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"presence_penalty\":3}", 400, "presence_penalty"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"frequency_penalty\":-2.5}", 400, "frequency_penalty"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_tokens\":0}", 400, "max_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_tokens\":\"ten\"}", 400, "max_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_completion_tokens\":-5}", 400, "max_completion_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_tokens\":100000}", 400, "messages"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"ignore_eos\":\"yes\"}", 400, "ignore_eos"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"a\",\"min_tokens\":-1}", 400, "min_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_tokens\":5,\"min_tokens\":6}", 400, "min_tokens"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"a\",\"stop_token_ids\":[2048]}", 400, "stop_token_ids"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stop_token_ids\":2}", 400, "stop_token_ids"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stop_token_ids\":[\"2\"]}", 400, "stop_token_ids"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"a\",\"skip_special_tokens\":0}", 400,
                        "skip_special_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"include_stop_str_in_output\":\"no\"}", 400,
                        "include_stop_str_in_output"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"chat_template_kwargs\":[]}", 400, "chat_template_kwargs"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"chat_template_kwargs\":{\"tools\":[]}}", 400,
                        "chat_template_kwargs.tools"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"a\",\"chat_template_kwargs\":{}}", 400,
                        "chat_template_kwargs"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"n\":0}", 400, "n"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"n\":17}", 400, "n"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"seed\":\"abc\"}", 400, "seed"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"seed\":1180591620717411303424}", 400, "seed"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"max_tokens\":9223372036854775808}", 400, "max_tokens"),
                Arguments.of(C, "{" + M + "," + MSG + "}xyz", 400, null),
                Arguments.of(C, "{" + M + "," + MSG + "}{}", 400, null),
                Arguments.of("/fn-chat-completions", "{" + M + "," + MSG + "}xyz", 400, null),
                Arguments.of("/fn-completions", "{\"model\":", 400, null),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", 400, "stop"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stop\":[1]}", 400, "stop"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stop\":\"\"}", 400, "stop"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stream\":\"yes\"}", 400, "stream"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stream_options\":{\"include_usage\":true}}", 400, "stream_options"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stream\":true,\"stream_options\":{\"extra\":1}}", 400, "stream_options.extra"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"stream\":true,\"stream_options\":{\"include_usage\":1}}", 400,
                        "stream_options.include_usage"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"logprobs\":1}", 400, "logprobs"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"top_logprobs\":3}", 400, "top_logprobs"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"logprobs\":true,\"top_logprobs\":21}", 400, "top_logprobs"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"user\":7}", 400, "user"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}", 400, "tools"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"response_format\":{\"type\":\"json_object\"}}", 400, "response_format"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"logit_bias\":{\"50\":100}}", 400, "logit_bias"),
                Arguments.of(C, "{" + M + "," + MSG + ",\"made_up\":true}", 400, "made_up"),
                Arguments.of(T, "{" + M + "}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":42}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":[\"a\",7]}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":[]}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":[[1,2],[]]}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"n\":16}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":[1,999999]}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"logprobs\":6}", 400, "logprobs"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"best_of\":3}", 400, "best_of"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"suffix\":\"y\"}", 400, "suffix"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"messages\":[]}", 400, "messages"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"" + "once upon a time ".repeat(200) + "\"}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"max_tokens\":100000}", 400, "prompt"),
                Arguments.of(T, "{" + M + ",\"prompt\":\"x\",\"max_tokens\":0}", 400, "max_tokens"),
                Arguments.of(E, "{" + M + "}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":\"\"}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":[]}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":[\"a\",[]]}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":[1,99999]}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":\"" + "once upon a time ".repeat(200) + "\"}", 400, "input"),
                Arguments.of(E, "{" + M + ",\"input\":\"x\",\"encoding_format\":\"hex\"}", 400, "encoding_format"),
                Arguments.of(E, "{" + M + ",\"input\":\"x\",\"dimensions\":3}", 400, "dimensions"),
                Arguments.of(E, "{" + M + ",\"input\":\"x\",\"dimensions\":4294967424}", 400, "dimensions"),
                Arguments.of(E, "{" + M + ",\"input\":\"x\",\"made_up\":1}", 400, "made_up"),
                Arguments.of(E, "{\"model\":\"other\",\"input\":\"x\"}", 404, "model"),
                Arguments.of("/v1/embeddings/x", "{" + M + ",\"input\":\"x\"}", 404, null),
                Arguments.of("/v1", "{}", 404, null),
                Arguments.of("/v2/chat/completions", "{" + M + "," + MSG + "}", 404, null),
                Arguments.of("/chat/completions", "{" + M + "," + MSG + "}", 404, null),
                Arguments.of("/nothing", "{}", 404, null),
                Arguments.of("/", "{}", 404, null),
                Arguments.of("/v1/models", "{}", 405, null));
    }

    @ParameterizedTest
    @Order(1)
    @MethodSource("badRequests")
    void getsTheRightClientError(String path, String body, int status, String param) {
        Response r = api().body(body).post(path);
        r.then().statusCode(status).body("error.message", notNullValue()).body("error.type", notNullValue())
                .body("error.param", equalTo(param));
        assertFalse(r.asString().contains("\tat "), "no stack trace: " + r.asString());
    }

    @ParameterizedTest
    @Order(1)
    @ValueSource(strings = {"GET /nothing", "DELETE /nothing", "PUT /v1/chat", "GET /v1/nothing/deeper", "GET /ping/x",
            "PATCH /fn-unknown"})
    void unknownPathsGetOpenAisNotFound(String request) {
        String[] methodAndPath = request.split(" ");
        Response r = api().request(methodAndPath[0], methodAndPath[1]);
        r.then().statusCode(404).contentType("application/json").body("error.type", equalTo("invalid_request_error"))
                .body("error.code", equalTo("unknown_url")).body("error.param", nullValue())
                .body("error.message", equalTo("Invalid URL (" + request + ")"));
    }

    /** A function's GET once got a 400 about its JSON body (Funqy read the query as one). */
    @ParameterizedTest
    @Order(1)
    @ValueSource(strings = {"GET /fn-chat-completions POST", "DELETE /fn-completions POST", "PUT /fn-completions POST",
            "GET /v1/chat/completions POST", "POST /v1/models GET, HEAD"})
    void wrongMethodsGet405NamingTheAllowedOnes(String request) {
        String[] parts = request.split(" ", 3);
        Response r = api().request(parts[0], parts[1]);
        r.then().statusCode(405).header("Allow", parts[2]).contentType("application/json")
                .body("error.type", equalTo("invalid_request_error")).body("error.code", equalTo("method_not_allowed"))
                .body("error.param", nullValue())
                .body("error.message", equalTo(parts[0] + " is not allowed on " + parts[1]));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"model\": tinystories}", "{\"model\":\"x\"}xyz", "{\"model\":\"x\",}", "{'model':1}",
            "{\"a\":1\n,\n\"b\":\u0001}", "{\"a\":[1,2"})
    void jsonErrorsSayWhatAndWhereInOurWords(String body) {
        String message = api().body(body).post(C).then().statusCode(400).body("error.code", equalTo("invalid_json"))
                .extract().path("error.message");
        assertTrue(message.matches("We could not parse the JSON body of your request: .+ \\(line \\d+, column \\d+\\)"),
                message);
        assertFalse(message.contains("Feature") || message.contains("Jackson") || message.contains("jackson")
                || message.contains("JsonReadFeature") || message.contains("code "), message);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"seed\":1180591620717411303424", "\"max_tokens\":9223372036854775808"})
    void hugeIntegersAreOutOfRangeNotNonIntegers(String parameter) {
        api().body(chat("Hi", parameter)).post(C).then().statusCode(400)
                .body("error.message", containsString("greater than the maximum of"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v1/models", "/v1/models/" + MODEL, "/ping"})
    void headIsServedWhereGetIs(String path) {
        api().head(path).then().statusCode(200);
    }

    @Test
    void unauthorizedNamesTheBearerScheme() {
        RestAssured.given().get("/v1/models").then().statusCode(401).header("WWW-Authenticate", "Bearer");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n{}\r\n0\r\n\r\n"})
    void brokenFramingGets400(String framing) throws Exception {
        try (RawHttp raw = new RawHttp()) {
            String answer = raw.send("POST " + C + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\nContent-Type: application/json\r\n" + framing).readUntilClosed(5000);
            assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
            assertTrue(answer.contains("\"code\":\"invalid_body\""), answer);
        }
    }

    /** The client ends its side (FIN) before the body its Content-Length (or chunking) announced is complete. */
    @ParameterizedTest
    @ValueSource(strings = {"Content-Length: 100\r\n\r\n{\"model\":", "Transfer-Encoding: chunked\r\n\r\n9\r\n{\"model\":\r\n"})
    void bodyCutShortByTheClientGets400(String framing) throws Exception {
        try (RawHttp raw = new RawHttp()) {
            String answer = raw.send("POST " + C + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\nContent-Type: application/json\r\n" + framing).finish().readUntilClosed(5000);
            assertTrue(answer.startsWith("HTTP/1.1 400"), answer);
            assertTrue(answer.contains("\"code\":\"invalid_body\""), answer);
            assertTrue(answer.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), answer);
        }
    }

    /**
     * A complete request followed at once by the client's end (FIN): with half-closure allowed for cut-short bodies, the
     * end still closes the connection, and what was answered before it is sent.
     */
    @Test
    void aRequestEndedByTheClientStillGetsTheAnswerWrittenForIt() throws Exception {
        try (RawHttp raw = new RawHttp()) {
            String answer = raw.send("GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + KEY
                    + "\r\n\r\n").finish().readUntilClosed(5000);
            assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
            assertTrue(answer.endsWith("}]}"), answer);
        }
    }

    @Test
    void quarkusPathsKeepTheirOwnAnswers() {
        RestAssured.given().get("/q/nothing").then().statusCode(404).body(not(containsString("unknown_url")));
        RestAssured.given().get("/q/health/live").then().statusCode(200);
    }

    @Test
    void theMatrixHasAtLeastFortyCases() {
        assertTrue(badRequests().count() >= 40);
    }

    @Test
    @Order(2)
    void serverStillServesAfterwards() {
        RestAssured.given().header("Authorization", "Bearer " + KEY).contentType("application/json")
                .body(chat("Once upon a time", "\"max_tokens\":5")).post(C)
                .then().statusCode(200).body("usage.completion_tokens", equalTo(5));
    }
}
