package io.zse.tokenizer.template;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...)}, byte for byte:
 * transformers' {@code tojson} filter is exactly that call.
 */
final class JsonDumps {
    private final String indent;        // null: one line
    private final String itemSeparator; // ", " on one line, "," when indenting
    private final String keySeparator;  // ": "
    private final boolean sortKeys;
    private final boolean ensureAscii;

    JsonDumps(String indent, String itemSeparator, String keySeparator, boolean sortKeys, boolean ensureAscii) {
        this.ensureAscii = ensureAscii;
        this.indent = indent;
        this.itemSeparator = itemSeparator != null ? itemSeparator : (indent == null ? ", " : ",");
        this.keySeparator = keySeparator != null ? keySeparator : ": ";
        this.sortKeys = sortKeys;
    }

    static String dumps(Object value) {
        return new JsonDumps(null, null, null, false, false).encode(value);
    }

    String encode(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value, 0);
        return out.toString();
    }

    private void write(StringBuilder out, Object value, int level) {
        switch (value) {
            case null -> out.append("null");
            case String s -> writeString(out, s);
            case Markup m -> writeString(out, m.text());
            case Boolean b -> out.append(b ? "true" : "false");
            case Double d -> out.append(floatJson(d));
            case Float f -> out.append(floatJson(f.doubleValue()));
            case BigDecimal d -> out.append(floatJson(d.doubleValue()));
            case Number n -> out.append(n);
            case List<?> list -> writeList(out, list, level);
            case Map<?, ?> map -> writeMap(out, map, level);
            default -> throw new ChatTemplateException(
                    "Object of type " + PyRepr.typeName(value) + " is not JSON serializable");
        }
    }

    private void writeList(StringBuilder out, List<?> list, int level) {
        if (list.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        String newline = newline(level + 1);
        out.append(newline);
        boolean first = true;
        for (Object item : list) {
            if (!first) {
                out.append(itemSeparator).append(newline);
            }
            first = false;
            write(out, item, level + 1);
        }
        out.append(newline(level)).append(']');
    }

    private void writeMap(StringBuilder out, Map<?, ?> map, int level) {
        if (map.isEmpty()) {
            out.append("{}");
            return;
        }
        List<Map.Entry<String, Object>> entries = new ArrayList<>(map.size());
        for (Map.Entry<?, ?> e : map.entrySet()) {
            entries.add(Map.entry(keyString(e.getKey()), e.getValue() == null ? NULL : e.getValue()));
        }
        if (sortKeys) {
            entries.sort(Map.Entry.comparingByKey(Comparator.naturalOrder()));
        }
        out.append('{');
        String newline = newline(level + 1);
        out.append(newline);
        boolean first = true;
        for (Map.Entry<String, Object> e : entries) {
            if (!first) {
                out.append(itemSeparator).append(newline);
            }
            first = false;
            writeString(out, e.getKey());
            out.append(keySeparator);
            write(out, e.getValue() == NULL ? null : e.getValue(), level + 1);
        }
        out.append(newline(level)).append('}');
    }

    private static final Object NULL = new Object(); // Map.entry refuses null values

    private String newline(int level) {
        return indent == null ? "" : "\n" + indent.repeat(level);
    }

    private static String keyString(Object key) {
        return switch (key) {
            case String s -> s;
            case Markup m -> m.text();
            case null -> "null";
            case Boolean b -> b ? "true" : "false";
            case Double d -> floatJson(d);
            case Float f -> floatJson(f.doubleValue());
            case BigDecimal d -> floatJson(d.doubleValue());
            case Number n -> n.toString();
            default -> throw new ChatTemplateException(
                    "keys must be str, int, float, bool or None, not " + PyRepr.typeName(key));
        };
    }

    private static String floatJson(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "Infinity" : "-Infinity";
        }
        return PyRepr.floatRepr(d);
    }

    /** ensure_ascii=False: only '"', '\\' and control characters below 0x20 are escaped. */
    private void writeString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || (ensureAscii && c > 0x7e)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
