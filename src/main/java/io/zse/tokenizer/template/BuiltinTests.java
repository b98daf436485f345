package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;

/** Jinja2's built-in tests ({@code x is defined}, {@code x is divisibleby 3}, ...). */
final class BuiltinTests {
    private BuiltinTests() {
    }

    static boolean test(String name, Object value, Arguments a) {
        return switch (name) {
            case "defined" -> !(value instanceof Undefined);
            case "undefined" -> value instanceof Undefined;
            case "none" -> value == null;
            case "boolean" -> value instanceof Boolean;
            case "true" -> Boolean.TRUE.equals(value);
            case "false" -> Boolean.FALSE.equals(value);
            case "integer" -> PyValues.isInt(value) && !(value instanceof Boolean);
            case "float" -> PyValues.isFloat(value);
            case "number" -> PyValues.isNumber(value);
            case "string" -> PyValues.isString(value);
            case "mapping" -> value instanceof Map;
            case "iterable" -> PyValues.isString(value) || value instanceof List || value instanceof Map
                    || value instanceof Undefined;
            // Jinja2 asks for len() and __getitem__: dicts and Undefined qualify too
            case "sequence" -> PyValues.isString(value) || value instanceof List || value instanceof Map
                    || value instanceof Undefined;
            case "callable" -> value instanceof TemplateCallable;
            case "odd", "even" -> {
                long remainder = PyValues.toLong(PyValues.binary("%", value, 2L));
                yield name.equals("odd") ? remainder == 1 : remainder == 0;
            }
            case "divisibleby" -> PyValues.toDouble(PyValues.binary("%", value, a.required(0, "num"))) == 0;
            case "eq", "equalto", "==" -> PyValues.equal(value, a.required(0, "other"));
            case "ne", "!=" -> !PyValues.equal(value, a.required(0, "other"));
            case "lt", "lessthan", "<" -> PyValues.compare(value, a.required(0, "other"), "<") < 0;
            case "le", "<=" -> PyValues.compare(value, a.required(0, "other"), "<=") <= 0;
            case "gt", "greaterthan", ">" -> PyValues.compare(value, a.required(0, "other"), ">") > 0;
            case "ge", ">=" -> PyValues.compare(value, a.required(0, "other"), ">=") >= 0;
            case "in" -> PyValues.contains(a.required(0, "seq"), value);
            case "sameas" -> sameAs(value, a.required(0, "other"));
            case "lower" -> (Boolean) PyMethods.call(PyRepr.str(value), "islower", List.of(), Map.of());
            case "upper" -> (Boolean) PyMethods.call(PyRepr.str(value), "isupper", List.of(), Map.of());
            case "escaped" -> value instanceof Markup;
            default -> throw new ChatTemplateException("No test named '" + name + "'.");
        };
    }

    /** Python's {@code is}: identity; None/True/False and small values behave as singletons. */
    private static boolean sameAs(Object a, Object b) {
        if (a == null || b == null || a instanceof Boolean || b instanceof Boolean) {
            return a == null ? b == null : a.equals(b);
        }
        return a == b;
    }
}
