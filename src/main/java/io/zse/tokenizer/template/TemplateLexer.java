package io.zse.tokenizer.template;

import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * Splits a template into data and tag tokens the way Jinja2's lexer does with {@code trim_blocks=True,
 * lstrip_blocks=True}: {@code -} on a tag strips all whitespace on that side, {@code +} on an opening tag keeps
 * the indentation, a block or comment tag at the start of a line drops the spaces and tabs before it, and the first
 * newline after {@code %}} or {@code #}} is removed. Newlines are normalised and one trailing newline is dropped
 * ({@code keep_trailing_newline=False}).
 */
final class TemplateLexer {
    private static final String[] OPERATORS = {
        "**", "//", "==", "!=", ">=", "<=",
        "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";",
    };

    private final String src;
    private final List<Token> tokens = new ArrayList<>();
    private int pos;
    private int line = 1;
    private boolean lineStarting = true; // did the previous match end with a newline (lstrip at template start too)

    private TemplateLexer(String source) {
        String normalised = source.replace("\r\n", "\n").replace('\r', '\n');
        this.src = normalised.endsWith("\n") ? normalised.substring(0, normalised.length() - 1) : normalised;
    }

    static List<Token> tokenize(String source) {
        TemplateLexer lexer = new TemplateLexer(source);
        lexer.run();
        return lexer.tokens;
    }

    private void run() {
        while (pos < src.length()) {
            int tag = nextTagStart(pos);
            if (tag < 0) {
                emitData(src.substring(pos));
                break;
            }
            char kind = src.charAt(tag + 1);
            char sign = tag + 2 < src.length() && (src.charAt(tag + 2) == '-' || src.charAt(tag + 2) == '+')
                    ? src.charAt(tag + 2) : 0;
            int rawEnd = kind == '%' ? matchRawBegin(tag) : -1;
            emitData(stripBeforeTag(src.substring(pos, tag), sign, kind != '{'));
            int inside = tag + 2 + (sign != 0 ? 1 : 0);
            if (rawEnd >= 0) {
                lexRaw(rawEnd);
            } else if (kind == '#') {
                lexComment(inside);
            } else {
                lexTag(inside, kind == '%');
            }
        }
        tokens.add(new Token(Token.Kind.EOF, null, line));
    }

    private int nextTagStart(int from) {
        for (int i = src.indexOf('{', from); i >= 0 && i + 1 < src.length(); i = src.indexOf('{', i + 1)) {
            char c = src.charAt(i + 1);
            if (c == '{' || c == '%' || c == '#') {
                return i;
            }
        }
        return -1;
    }

    /** Jinja2's OptionalLStrip: '-' strips all trailing whitespace; lstrip_blocks strips a blank line prefix. */
    private String stripBeforeTag(String text, char sign, boolean lstripApplies) {
        if (sign == '-') {
            return PyStrings.strip(text, null, false, true);
        }
        if (sign != '+' && lstripApplies) {
            int lineStart = text.lastIndexOf('\n') + 1;
            if ((lineStart > 0 || lineStarting) && onlySpacesAndTabs(text, lineStart)) {
                return text.substring(0, lineStart);
            }
        }
        return text;
    }

    private static boolean onlySpacesAndTabs(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            if (s.charAt(i) != ' ' && s.charAt(i) != '\t') {
                return false;
            }
        }
        return true;
    }

    private void emitData(String text) {
        if (!text.isEmpty()) {
            tokens.add(new Token(Token.Kind.DATA, text, line));
            line += countNewlines(text);
        }
    }

    private static int countNewlines(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }

    /** Moves pos past the matched text and records whether it ended a line. */
    private void consumeTo(int end) {
        line += countNewlines(src.substring(pos, end));
        lineStarting = end > pos && src.charAt(end - 1) == '\n';
        pos = end;
    }

    private int skipWhitespace(int i) {
        while (i < src.length() && PyStrings.isSpace(src.charAt(i))) {
            i++;
        }
        return i;
    }

    /** {@code {%[-+]?\s*raw\s*(-%}\s*|%})}: returns the end of the match or -1. Note: no trim_blocks after raw. */
    private int matchRawBegin(int tag) {
        int i = tag + 2;
        if (i < src.length() && (src.charAt(i) == '-' || src.charAt(i) == '+')) {
            i++;
        }
        i = skipWhitespace(i);
        if (!src.startsWith("raw", i)) {
            return -1;
        }
        i = skipWhitespace(i + 3);
        if (src.startsWith("-%}", i)) {
            return skipWhitespace(i + 3);
        }
        return src.startsWith("%}", i) ? i + 2 : -1;
    }

    private void lexRaw(int bodyStart) {
        consumeTo(bodyStart);
        for (int tag = src.indexOf("{%", bodyStart); tag >= 0; tag = src.indexOf("{%", tag + 1)) {
            int i = tag + 2;
            char sign = i < src.length() && (src.charAt(i) == '-' || src.charAt(i) == '+') ? src.charAt(i) : 0;
            i = skipWhitespace(sign != 0 ? i + 1 : i);
            if (!src.startsWith("endraw", i)) {
                continue;
            }
            int end = endOfBlockTag(skipWhitespace(i + 6));
            if (end < 0) {
                continue;
            }
            emitData(stripBeforeTag(src.substring(bodyStart, tag), sign, true));
            consumeTo(end);
            return;
        }
        throw error("Missing end of raw directive");
    }

    /** Matches {@code +%}|-%}\s*|%}\n?} at i; returns its end or -1. */
    private int endOfBlockTag(int i) {
        if (src.startsWith("+%}", i)) {
            return i + 3;
        }
        if (src.startsWith("-%}", i)) {
            return skipWhitespace(i + 3);
        }
        if (src.startsWith("%}", i)) {
            return i + 2 < src.length() && src.charAt(i + 2) == '\n' ? i + 3 : i + 2;
        }
        return -1;
    }

    private void lexComment(int bodyStart) {
        int close = src.indexOf("#}", bodyStart);
        if (close < 0) {
            throw error("Missing end of comment tag");
        }
        int end;
        if (close > bodyStart && src.charAt(close - 1) == '-') {
            end = skipWhitespace(close + 2);
        } else if (close > bodyStart && src.charAt(close - 1) == '+') {
            end = close + 2;
        } else {
            end = close + 2 < src.length() && src.charAt(close + 2) == '\n' ? close + 3 : close + 2;
        }
        consumeTo(end);
    }

    private void lexTag(int inside, boolean block) {
        tokens.add(new Token(block ? Token.Kind.BLOCK_BEGIN : Token.Kind.VARIABLE_BEGIN, null, line));
        consumeTo(inside);
        Deque<Character> brackets = new ArrayDeque<>();
        int i = inside;
        while (true) {
            if (i >= src.length()) {
                throw error("unexpected end of template, expected '" + (block ? "%}" : "}}") + "'");
            }
            if (brackets.isEmpty()) {
                int end = block ? endOfBlockTag(i) : endOfVariableTag(i);
                if (end >= 0) {
                    tokens.add(new Token(block ? Token.Kind.BLOCK_END : Token.Kind.VARIABLE_END, null, line));
                    pos = i;
                    consumeTo(end);
                    return;
                }
            }
            char c = src.charAt(i);
            if (PyStrings.isSpace(c)) {
                if (c == '\n') {
                    line++;
                }
                i++;
            } else if (Character.isDigit(c)) {
                i = lexNumber(i);
            } else if (Character.isLetter(c) || c == '_') {
                int start = i;
                while (i < src.length() && (Character.isLetterOrDigit(src.charAt(i)) || src.charAt(i) == '_')) {
                    i++;
                }
                tokens.add(new Token(Token.Kind.NAME, src.substring(start, i), line));
            } else if (c == '\'' || c == '"') {
                i = lexString(i);
            } else {
                String op = operatorAt(i);
                if (op == null) {
                    throw error("unexpected char " + PyRepr.repr(String.valueOf(c)) + " at " + i);
                }
                switch (op) {
                    case "(" -> brackets.push(')');
                    case "[" -> brackets.push(']');
                    case "{" -> brackets.push('}');
                    case ")", "]", "}" -> {
                        if (brackets.isEmpty()) {
                            throw error("unexpected '" + op + "'");
                        }
                        char expected = brackets.pop();
                        if (expected != op.charAt(0)) {
                            throw error("unexpected '" + op + "', expected '" + expected + "'");
                        }
                    }
                    default -> { }
                }
                tokens.add(new Token(Token.Kind.OPERATOR, op, line));
                i += op.length();
            }
        }
    }

    /** {@code -}}\s*|}}}: returns the end of the match or -1 (no trim_blocks after print tags). */
    private int endOfVariableTag(int i) {
        if (src.startsWith("-}}", i)) {
            return skipWhitespace(i + 3);
        }
        return src.startsWith("}}", i) ? i + 2 : -1;
    }

    private String operatorAt(int i) {
        for (String op : OPERATORS) {
            if (src.startsWith(op, i)) {
                return op;
            }
        }
        return null;
    }

    private int lexNumber(int start) {
        int i = digits(start);
        boolean afterDot = !tokens.isEmpty() && tokens.getLast().isOperator(".");
        boolean isFloat = false;
        // Jinja2: no float right after '.', so "a.0.1" is a.0 then .1 as items
        if (!afterDot && i + 1 < src.length() && src.charAt(i) == '.' && Character.isDigit(src.charAt(i + 1))) {
            i = digits(i + 1);
            isFloat = true;
        }
        if (!afterDot && i < src.length() && (src.charAt(i) == 'e' || src.charAt(i) == 'E')) {
            int j = i + 1;
            if (j < src.length() && (src.charAt(j) == '+' || src.charAt(j) == '-')) {
                j++;
            }
            if (j < src.length() && Character.isDigit(src.charAt(j))) {
                i = digits(j);
                isFloat = true;
            }
        }
        String text = src.substring(start, i).replace("_", "");
        if (isFloat) {
            tokens.add(new Token(Token.Kind.FLOAT, Double.parseDouble(text), line));
        } else {
            tokens.add(new Token(Token.Kind.INTEGER, Long.parseLong(text), line));
        }
        return i;
    }

    private int digits(int i) {
        while (i < src.length() && (Character.isDigit(src.charAt(i)) || src.charAt(i) == '_')) {
            i++;
        }
        return i;
    }

    /** Python string literal with unicode-escape decoding; unknown escapes stay as written. */
    private int lexString(int start) {
        char quote = src.charAt(start);
        StringBuilder out = new StringBuilder();
        int i = start + 1;
        while (true) {
            if (i >= src.length()) {
                throw error("unexpected end of string");
            }
            char c = src.charAt(i);
            if (c == quote) {
                break;
            }
            if (c != '\\' || i + 1 >= src.length()) {
                out.append(c);
                i++;
                continue;
            }
            char e = src.charAt(i + 1);
            i += 2;
            switch (e) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case '\\' -> out.append('\\');
                case '\'' -> out.append('\'');
                case '"' -> out.append('"');
                case 'a' -> out.append('\u0007');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'v' -> out.append('\u000b');
                case '\n' -> { }
                case 'x', 'u', 'U' -> {
                    int len = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    if (i + len > src.length()) {
                        throw error("truncated \\" + e + " escape");
                    }
                    out.appendCodePoint(Integer.parseInt(src.substring(i, i + len), 16));
                    i += len;
                }
                default -> {
                    if (e >= '0' && e <= '7') {
                        int j = i - 1;
                        int end = Math.min(j + 3, src.length());
                        int k = j;
                        while (k < end && src.charAt(k) >= '0' && src.charAt(k) <= '7') {
                            k++;
                        }
                        out.append((char) Integer.parseInt(src.substring(j, k), 8));
                        i = k;
                    } else {
                        out.append('\\').append(e);
                    }
                }
            }
        }
        tokens.add(new Token(Token.Kind.STRING, out.toString(), line));
        line += countNewlines(src.substring(start, i));
        return i + 1;
    }

    private ChatTemplateException error(String message) {
        return new ChatTemplateException("template syntax error: " + message + " (line " + line + ")");
    }
}
