package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;

/**
 * A minimal JSON parser for the small settings document inside the binary form: loading Jackson's streaming
 * parser costs about 100 ms of class loading on a cold JVM, more than parsing a few kilobytes by hand.
 */
final class SmallJsonParser {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final String text;
    private int pos;

    private SmallJsonParser(String text) {
        this.text = text;
    }

    static JsonNode parse(byte[] utf8, int offset, int length) {
        SmallJsonParser parser = new SmallJsonParser(new String(utf8, offset, length, StandardCharsets.UTF_8));
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
        switch (c) {
            case '{' -> {
                pos++;
                ObjectNode object = NODES.objectNode();
                skipSpace();
                if (peek('}')) {
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
                return object;
            }
            case '[' -> {
                pos++;
                ArrayNode array = NODES.arrayNode();
                skipSpace();
                if (peek(']')) {
                    return array;
                }
                do {
                    array.add(value());
                    skipSpace();
                } while (peek(','));
                expect(']');
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
            return literal.contains(".") || literal.contains("e") || literal.contains("E")
                    ? NODES.numberNode(Double.parseDouble(literal)) : NODES.numberNode(Long.parseLong(literal));
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
            char e = text.charAt(pos++);
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
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
        return new IllegalArgumentException("corrupt precompiled tokenizer settings: " + what + " at " + pos);
    }
}
