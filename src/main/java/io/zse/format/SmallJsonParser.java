package io.zse.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * A minimal JSON parser for the small documents read on every start (a model's config, a precompiled tokenizer's
 * settings): an ObjectMapper and Jackson's streaming parser cost a few hundred ms of class loading on a cold JVM,
 * far more than parsing a few kilobytes by hand. It builds Jackson's tree nodes, which are cheap to load.
 */
public final class SmallJsonParser {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final String text;
    private final String document;
    private int pos;
    private int depth;                      // objects and arrays open around the value being read
    /** Deeper nesting is refused: a hostile file must not overflow the stack of this recursive reader. */
    static final int MAX_DEPTH = 256;

    private SmallJsonParser(String text, String document) {
        this.text = text;
        this.document = document;
    }

    /** Parses UTF-8 JSON; malformed input is an IllegalArgumentException naming {@code document} and the offset. */
    public static JsonNode parse(byte[] utf8, int offset, int length, String document) {
        return parse(new String(utf8, offset, length, StandardCharsets.UTF_8), document);
    }

    /** Parses JSON text; malformed input is an IllegalArgumentException naming {@code document} and the offset. */
    public static JsonNode parse(String text, String document) {
        SmallJsonParser parser = new SmallJsonParser(text, document);
        JsonNode value = parser.value();
        parser.skipSpace();
        if (parser.pos != parser.text.length()) {
            throw parser.error("trailing characters");
        }
        return value;
    }

    private JsonNode value() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(pos);
        if ((c == '{' || c == '[') && ++depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH);
        }
        switch (c) {
            case '{' -> {
                pos++;
                ObjectNode object = NODES.objectNode();
                skipSpace();
                if (peek('}')) {
                    depth--;
                    return object;
                }
                do {
                    skipSpace();
                    String name = string();
                    skipSpace();
                    expect(':');
                    object.set(name, value());
                    skipSpace();
                } while (peek(','));
                expect('}');
                depth--;
                return object;
            }
            case '[' -> {
                pos++;
                ArrayNode array = NODES.arrayNode();
                skipSpace();
                if (peek(']')) {
                    depth--;
                    return array;
                }
                do {
                    array.add(value());
                    skipSpace();
                } while (peek(','));
                expect(']');
                depth--;
                return array;
            }
            case '"' -> {
                return NODES.textNode(string());
            }
            default -> {
                if (text.startsWith("true", pos)) {
                    pos += 4;
                    return NODES.booleanNode(true);
                }
                if (text.startsWith("false", pos)) {
                    pos += 5;
                    return NODES.booleanNode(false);
                }
                if (text.startsWith("null", pos)) {
                    pos += 4;
                    return NODES.nullNode();
                }
                return number();
            }
        }
    }

    private JsonNode number() {
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        String literal = text.substring(start, pos);
        try {
            if (literal.contains(".") || literal.contains("e") || literal.contains("E")) {
                return NODES.numberNode(Double.parseDouble(literal));
            }
            // tokenizer_config.json's "model_max_length" is often 1e30 written out as an integer
            BigInteger value = new BigInteger(literal);
            return value.bitLength() < 64 ? NODES.numberNode(value.longValue()) : NODES.numberNode(value);
        } catch (NumberFormatException e) {
            throw error("bad value");
        }
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw error("unterminated \\u escape");
                    }
                    try {
                        out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    } catch (NumberFormatException bad) {
                        throw error("bad \\u escape");
                    }
                    pos += 4;
                }
                default -> out.append(e); // \" \\ \/
            }
        }
    }

    private void skipSpace() {
        while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private boolean peek(char c) {
        if (pos < text.length() && text.charAt(pos) == c) {
            pos++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(document + " is not valid JSON: " + what + " at offset " + pos);
    }
}
