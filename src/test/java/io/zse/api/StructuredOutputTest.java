package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * response_format over HTTP on a random-weight model with the real 151K-token Qwen3 vocabulary: sampled freely, every
 * choice still parses and validates against its schema (checked by an independent JSON Schema library).
 */
@QuarkusTest
@TestProfile(QwenToolModel.Profile.class)
class StructuredOutputTest extends ApiTestBase {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String SCHEMA = """
            {"type": "object", "$defs": {
               "step": {"type": "object", "properties": {
                 "action": {"enum": ["walk", "ride", "fly"]},
                 "minutes": {"type": "integer"},
                 "then": {"anyOf": [{"$ref": "#/$defs/step"}, {"type": "null"}]}},
                 "required": ["action", "minutes", "then"], "additionalProperties": false}},
             "properties": {
               "city": {"type": "string"},
               "rating": {"type": "number"},
               "open": {"type": "boolean"},
               "tags": {"type": "array", "items": {"type": "string"}},
               "plan": {"$ref": "#/$defs/step"},
               "version": {"const": 2}},
             "required": ["city", "rating", "open", "tags", "plan", "version"], "additionalProperties": false}""";

    private static String body(String responseFormat, String extra) {
        return "{\"model\":\"" + QwenToolModel.ID + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Plan a trip\"}],"
                + "\"response_format\":" + responseFormat + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    @Test
    void jsonSchemaStrictOutputsValidate() throws Exception {
        String format = "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"trip\",\"strict\":true,\"schema\":"
                + SCHEMA + "}}";
        Response r = api().body(body(format, "\"n\":2,\"temperature\":1.0,\"seed\":5,\"max_tokens\":120"))
                .post("/v1/chat/completions");
        r.then().statusCode(200);
        var validator = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(JSON.readTree(SCHEMA));
        List<String> contents = r.jsonPath().getList("choices.message.content");
        assertEquals(2, contents.size());
        for (String content : contents) {
            JsonNode value = JSON.readTree(content);
            assertTrue(validator.validate(value).isEmpty(), content + " -> " + validator.validate(value));
        }
        assertEquals(List.of("stop", "stop"), r.jsonPath().getList("choices.finish_reason"));
    }

    @Test
    void streamedJsonObjectParses() throws Exception {
        String body = api().body(body("{\"type\":\"json_object\"}", "\"stream\":true,\"seed\":9,\"max_tokens\":80"))
                .post("/v1/chat/completions").then().statusCode(200).extract().asString();
        StringBuilder text = new StringBuilder();
        for (String event : SseEvents.parse(body)) {
            if (!event.equals("[DONE]")) {
                JsonNode delta = JSON.readTree(event).path("choices").path(0).path("delta");
                text.append(delta.path("content").asText(""));
            }
        }
        assertTrue(JSON.readTree(text.toString()) instanceof ObjectNode, text.toString());
    }

    @Test
    void unsupportedSchemasAreRefusedByName() {
        String format = "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"strict\":true,\"schema\":"
                + "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\",\"pattern\":\"^a\"}},"
                + "\"required\":[\"id\"],\"additionalProperties\":false}}}";
        api().body(body(format, "")).post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("response_format"))
                .body("error.code", equalTo("invalid_json_schema"))
                .body("error.message", containsString("'pattern' is not supported"))
                .body("error.message", containsString("#/properties/id/pattern"));
        api().body(body("{\"type\":\"xml\"}", "")).post("/v1/chat/completions").then().statusCode(400)
                .body("error.param", equalTo("response_format.type"));
    }

    @Test
    void misshapenPropertiesAndRequiredAreRefused() {
        for (String schema : List.of("{\"type\":\"object\",\"properties\":[1]}",
                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":\"a\"}")) {
            String format = "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":" + schema + "}}";
            api().body(body(format, "")).post("/v1/chat/completions").then().statusCode(400)
                    .body("error.param", equalTo("response_format"))
                    .body("error.code", equalTo("invalid_json_schema"))
                    .body("error.message", containsString(schema.contains("[1]") ? "'properties' must be an object"
                            : "'required' must be an array of strings"));
        }
    }
}
