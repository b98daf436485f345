package io.zse.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;

/**
 * Builds JSON trees straight from the streaming parser. Tokenizers load on the cold-start path, and an ObjectMapper
 * costs a few hundred milliseconds to set up there; the tree classes alone are cheap.
 */
final class JsonTreeReader {
    /** The vocabulary's 150k field names are read once: interning or canonicalizing them only costs time. */
    static final JsonFactory FACTORY = JsonFactory.builder()
            .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
            .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
            .build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonTreeReader() {
    }

    /** Reads the value the parser's current token starts. */
    static JsonNode read(JsonParser parser) throws IOException {
        return switch (parser.currentToken()) {
            case START_OBJECT -> {
                ObjectNode object = NODES.objectNode();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String name = parser.currentName();
                    parser.nextToken();
                    object.set(name, read(parser));
                }
                yield object;
            }
            case START_ARRAY -> {
                ArrayNode array = NODES.arrayNode();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    array.add(read(parser));
                }
                yield array;
            }
            case VALUE_STRING -> NODES.textNode(parser.getText());
            case VALUE_NUMBER_INT -> NODES.numberNode(parser.getLongValue());
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(parser.getDoubleValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            default -> throw new IOException("unexpected JSON token " + parser.currentToken());
        };
    }

    static JsonNode read(byte[] json, int offset, int length) throws IOException {
        try (JsonParser parser = FACTORY.createParser(json, offset, length)) {
            parser.nextToken();
            return read(parser);
        }
    }
}
