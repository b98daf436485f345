package io.zse.api;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses a request body as exactly one JSON value, as OpenAI does: bytes after it are an error, and every error says
 * what is wrong and where in our words (Jackson's own messages name its internals and their feature flags).
 */
final class JsonBody {
    private static final ObjectReader READER = OpenAiShapes.JSON.reader()
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    /** Jackson names an unexpected character as ('x' (code 120)). */
    private static final Pattern UNEXPECTED = Pattern.compile("Unexpected character \\((.+?) \\(code (\\d+)\\)\\)");

    private JsonBody() {
    }

    /** The body's JSON value; a 400 {@code invalid_json} naming the problem and its line and column otherwise. */
    static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            throw ApiException.invalid("the request body is empty; it must be a JSON object", null);
        }
        try {
            return READER.readTree(text);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid("We could not parse the JSON body of your request: " + problem(e)
                    + where(e.getLocation()), null, "invalid_json");
        }
    }

    private static String problem(JsonProcessingException e) {
        String message = String.valueOf(e.getOriginalMessage());
        if (e instanceof JsonEOFException) {
            return "the body ends before the JSON value is complete";
        }
        if (message.startsWith("Trailing token")) {
            return "unexpected data after the JSON value";
        }
        Matcher m = UNEXPECTED.matcher(message);
        if (m.find()) {
            int code = Integer.parseInt(m.group(2));
            return "unexpected character " + (code < 0x20 ? "U+" + String.format("%04X", code) : m.group(1));
        }
        if (message.startsWith("Unrecognized token")) {
            return "unrecognized token " + message.substring("Unrecognized token ".length()).split(":", 2)[0];
        }
        if (message.contains("Numeric value") && message.contains("out of range")) {
            return "a number is out of range";
        }
        return "invalid JSON";
    }

    private static String where(JsonLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }
}
