package io.zse.convert;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The JSON files of a checkpoint directory, checked when convert reads them: a file that is not a JSON object is
 * refused with its path and the line and column where parsing stopped. Convert copies some of them into the .zse
 * unread (tokenizer_config.json, special_tokens_map.json), and a broken one would otherwise fail only at serve.
 */
final class CheckpointJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private CheckpointJson() {
    }

    /** {@code bytes}, the content of {@code file}, parsed; refused unless it is one JSON object. */
    static JsonNode object(Path file, byte[] bytes) {
        check(file, bytes); // readTree alone would accept text after the object
        try {
            return JSON.readTree(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not after check: the bytes are one JSON object
        }
    }

    /**
     * Checks that {@code bytes}, the content of {@code file}, is one JSON object, token by token without building a
     * tree: a tokenizer.json may be tens of megabytes.
     */
    static void check(Path file, byte[] bytes) {
        if (bytes.length >= 3 && (bytes[0] & 0xFF) == 0xEF && (bytes[1] & 0xFF) == 0xBB && (bytes[2] & 0xFF) == 0xBF) {
            // Jackson skips it, but Python's json (transformers) and the reader serve uses refuse it
            throw new IllegalArgumentException(file + " is not valid JSON: a UTF-8 byte order mark at line 1, "
                    + "column 1");
        }
        try (JsonParser parser = JSON.getFactory().createParser(bytes)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new IllegalArgumentException(file + " is not a JSON object");
            }
            parser.skipChildren();
            if (parser.nextToken() != null) {
                throw new IllegalArgumentException(file + " is not valid JSON: more follows the object at "
                        + position(parser.currentTokenLocation()));
            }
        } catch (JsonProcessingException e) {
            throw invalid(file, e);
        } catch (IOException e) {
            throw new IllegalArgumentException(file + " could not be read: " + e.getMessage(), e);
        }
    }

    private static IllegalArgumentException invalid(Path file, JsonProcessingException e) {
        // the original message without Jackson's "[Source: ...]" tail, which names no file and repeats the place
        String problem = e.getOriginalMessage().lines().findFirst().orElse("").replaceAll(" \\(start marker at .*", "");
        return new IllegalArgumentException(file + " is not valid JSON: " + problem + " at "
                + position(e.getLocation()), e);
    }

    private static String position(JsonLocation at) {
        return at == null ? "an unknown position" : "line " + at.getLineNr() + ", column " + at.getColumnNr();
    }
}
