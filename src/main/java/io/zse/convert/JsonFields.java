package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Typed reads of one JSON object's fields (a {@code config.json} or a part of it), as transformers reads them: an
 * absent field takes its default, a number written as an integer serves where a float is expected, and null counts
 * as absent for the fields transformers declares optional (ids, strings, objects, lists; each reader says), as false
 * for {@link #bool}, and is refused by {@link #number}. A present field of any other JSON type is refused with its
 * name, its value and the type expected: Jackson's lenient {@code asDouble} or {@code asBoolean} would silently turn
 * {@code "x"} into the default or {@code "yes"} into false.
 */
final class JsonFields {
    private final JsonNode object;
    private final String document;
    private final String path;

    /**
     * @param object   the object read, or a missing node (every field absent)
     * @param document the file, for the refusal: {@code config.json}
     * @param path     the path to the object in that file, ending in a dot ({@code rope_parameters.}), or empty
     */
    JsonFields(JsonNode object, String document, String path) {
        this.object = object;
        this.document = document;
        this.path = path;
    }

    /** True when {@code key} is present and not null. */
    boolean has(String key) {
        return object.hasNonNull(key);
    }

    /** True when {@code key} is present as JSON null. */
    boolean isNull(String key) {
        return object.has(key) && object.get(key).isNull();
    }

    /** A number (integer or float); {@code absent} when the key is absent; null is refused. */
    double number(String key, double absent) {
        return present(key) ? numberOf(key) : absent;
    }

    /** A number above 0; refused when absent. */
    double positiveNumber(String key) {
        if (!has(key)) {
            throw refuse(key, "is missing");
        }
        double v = numberOf(key);
        if (v <= 0) {
            throw refuse(key, object.get(key) + " is not a positive number");
        }
        return v;
    }

    /** An integer; null when the key is absent or null. */
    Integer optionalInt(String key) {
        if (!has(key)) {
            return null;
        }
        JsonNode n = object.get(key);
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
            throw wrongType(key, "an integer");
        }
        return n.intValue();
    }

    /** An integer above 0; refused when absent or null. */
    int positiveInt(String key) {
        Integer v = optionalInt(key);
        if (v == null) {
            throw refuse(key, "is missing");
        }
        if (v <= 0) {
            throw refuse(key, v + " is not a positive integer");
        }
        return v;
    }

    /** An integer or a list of integers (transformers' eos_token_id); empty when absent or null. */
    List<Integer> intOrInts(String key) {
        List<Integer> ids = new ArrayList<>();
        if (!has(key)) {
            return ids;
        }
        JsonNode n = object.get(key);
        for (JsonNode id : n.isArray() ? n : List.of(n)) {
            if (!id.isIntegralNumber() || !id.canConvertToInt()) {
                throw wrongType(key, "an integer or a list of integers");
            }
            ids.add(id.intValue());
        }
        return ids;
    }

    /** true or false; {@code absent} when the key is absent; null is false (transformers tests the value's truth). */
    boolean bool(String key, boolean absent) {
        if (!present(key)) {
            return absent;
        }
        if (isNull(key)) {
            return false;
        }
        if (!object.get(key).isBoolean()) {
            throw wrongType(key, "true or false");
        }
        return object.get(key).booleanValue();
    }

    /** A string; {@code absent} when the key is absent or null. */
    String text(String key, String absent) {
        if (!has(key)) {
            return absent;
        }
        if (!object.get(key).isTextual()) {
            throw wrongType(key, "a string");
        }
        return object.get(key).textValue();
    }

    /** The object under {@code key}: a missing node when the key is absent or null; any other type is refused. */
    JsonNode object(String key) {
        return container(key, JsonNode::isObject, "an object");
    }

    /** The array under {@code key}: empty when the key is absent or null; any other type is refused. */
    JsonNode list(String key) {
        return container(key, JsonNode::isArray, "a list");
    }

    private JsonNode container(String key, Predicate<JsonNode> isExpected, String expected) {
        if (!has(key)) {
            return MissingNode.getInstance();
        }
        if (!isExpected.test(object.get(key))) {
            throw wrongType(key, expected);
        }
        return object.get(key);
    }

    /** The fields of the object under {@code key}, whose path continues from this one. */
    JsonFields fields(String key) {
        return new JsonFields(object(key), document, path + key + ".");
    }

    /** {@code key} as a refusal names it: the document, then the path to it. */
    String name(String key) {
        return document + ": " + path + key;
    }

    IllegalArgumentException refuse(String key, String problem) {
        return new IllegalArgumentException(name(key) + " " + problem);
    }

    private boolean present(String key) {
        return object.has(key);
    }

    private double numberOf(String key) {
        JsonNode n = object.get(key);
        if (!n.isNumber()) {
            throw wrongType(key, "a number");
        }
        return n.doubleValue();
    }

    private IllegalArgumentException wrongType(String key, String expected) {
        return refuse(key, "is " + object.get(key) + ", expected " + expected);
    }
}
