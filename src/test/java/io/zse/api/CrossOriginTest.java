package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;

/** CORS with the test profile's {@code zse.cors.origins=http://allowed.example}. */
@QuarkusTest
class CrossOriginTest extends ApiTestBase {
    private static final String ALLOWED = "http://allowed.example";

    @Test
    void aPreflightFromAnAllowedOriginIsAnsweredWithoutAKey() {
        RestAssured.given().header("Origin", ALLOWED).header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization, content-type")
                .options("/v1/chat/completions").then().statusCode(204)
                .header("Access-Control-Allow-Origin", equalTo(ALLOWED))
                .header("Access-Control-Allow-Methods", containsString("POST"))
                .header("Access-Control-Allow-Headers", equalTo("authorization, content-type"))
                .header("Access-Control-Max-Age", equalTo("600"))
                .header("Vary", equalTo("Origin"));
    }

    @Test
    void anotherOriginGetsNoCorsHeaders() {
        RestAssured.given().header("Origin", "http://elsewhere.example").header("Access-Control-Request-Method", "POST")
                .options("/v1/chat/completions").then().statusCode(403)
                .header("Access-Control-Allow-Origin", nullValue());
        api().header("Origin", "http://elsewhere.example").body(completion("Once", "\"max_tokens\":1"))
                .post("/v1/completions").then().statusCode(200).header("Access-Control-Allow-Origin", nullValue());
    }

    @Test
    void answersAndErrorsCarryTheHeaderSoThePageCanReadThem() {
        api().header("Origin", ALLOWED).body(completion("Once", "\"max_tokens\":1")).post("/v1/completions").then()
                .statusCode(200).header("Access-Control-Allow-Origin", equalTo(ALLOWED))
                .header("Access-Control-Expose-Headers", containsString("Retry-After"));
        RestAssured.given().header("Origin", ALLOWED).get("/v1/models").then().statusCode(401)
                .header("Access-Control-Allow-Origin", equalTo(ALLOWED))
                .body("error.code", equalTo("invalid_api_key"));
    }
}
