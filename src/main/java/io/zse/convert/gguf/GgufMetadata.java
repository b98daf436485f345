package io.zse.convert.gguf;

import java.util.List;
import java.util.Map;

/** Typed reads of GGUF metadata values; a missing or mistyped key is an {@link IllegalArgumentException} naming it. */
final class GgufMetadata {
    private final Map<String, Object> values;

    GgufMetadata(Map<String, Object> values) {
        this.values = values;
    }

    boolean has(String key) {
        return values.containsKey(key);
    }

    String string(String key) {
        Object v = values.get(key);
        if (!(v instanceof String s)) {
            throw wrong(key, v, "a string");
        }
        return s;
    }

    String string(String key, String fallback) {
        return has(key) ? string(key) : fallback;
    }

    /** A non-negative integer that fits an int. */
    int integer(String key) {
        Object v = values.get(key);
        if (!(v instanceof Long l) || l < 0 || l > Integer.MAX_VALUE) {
            throw wrong(key, v, "a non-negative 32-bit integer");
        }
        return (int) (long) l;
    }

    Integer integerOrNull(String key) {
        return has(key) ? integer(key) : null;
    }

    double number(String key, double fallback) {
        Object v = values.get(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof Double d) {
            return d;
        }
        if (v instanceof Long l) {
            return l;
        }
        throw wrong(key, v, "a number");
    }

    boolean bool(String key, boolean fallback) {
        Object v = values.get(key);
        if (v == null) {
            return fallback;
        }
        if (!(v instanceof Boolean b)) {
            throw wrong(key, v, "a boolean");
        }
        return b;
    }

    boolean isArray(String key) {
        return values.get(key) instanceof GgufFile.GgufArray;
    }

    /** The array's elements, each checked to be of {@code elementClass}; null if the key is absent. */
    <T> List<T> list(String key, Class<T> elementClass) {
        Object v = values.get(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof GgufFile.GgufArray array)) {
            throw wrong(key, v, "an array");
        }
        for (Object element : array.values()) {
            if (!elementClass.isInstance(element)) {
                throw wrong(key, element, "an array of " + elementClass.getSimpleName());
            }
        }
        @SuppressWarnings("unchecked")
        List<T> list = (List<T>) array.values();
        return list;
    }

    private static IllegalArgumentException wrong(String key, Object value, String expected) {
        String shown = value instanceof GgufFile.GgufArray a ? "an array of " + a.size()
                : value == null ? "missing" : value.getClass().getSimpleName() + " " + value;
        return new IllegalArgumentException("GGUF metadata '" + key + "' is " + shown + ", expected " + expected);
    }
}
