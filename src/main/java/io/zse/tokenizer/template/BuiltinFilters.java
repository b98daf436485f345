package io.zse.tokenizer.template;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Jinja2's built-in filters, plus transformers' {@code tojson}. Filters that return generators in Jinja2
 * ({@code map}, {@code select}, {@code unique}...) return lists here.
 */
final class BuiltinFilters {
    private static final Pattern WORD_BEGINNING = Pattern.compile("([-\\s({\\[<]+)", Pattern.UNICODE_CHARACTER_CLASS);
    private static final Pattern WORD = Pattern.compile("\\w+", Pattern.UNICODE_CHARACTER_CLASS);

    private BuiltinFilters() {
    }

    static Object apply(String name, Object value, Arguments a) {
        return switch (name) {
            case "tojson" -> toJson(value, a);
            case "trim" -> PyStrings.strip(softStr(value), a.optionalString(0, "chars"), true, true);
            case "upper" -> PyStrings.upper(softStr(value));
            case "lower" -> PyStrings.lower(softStr(value));
            case "title" -> title(softStr(value));
            case "capitalize" -> PyStrings.capitalize(softStr(value));
            case "length", "count" -> PyValues.length(value);
            case "first" -> {
                List<?> items = PyValues.iterate(value);
                yield items.isEmpty() ? new Undefined("No first item, sequence was empty.") : items.getFirst();
            }
            case "last" -> {
                List<?> items = PyValues.iterate(value);
                yield items.isEmpty() ? new Undefined("No last item, sequence was empty.") : items.getLast();
            }
            case "join" -> join(value, a);
            case "default", "d" -> {
                boolean useDefault = value instanceof Undefined || (a.flag(1, "boolean", false) && !PyValues.truthy(value));
                yield useDefault ? a.optional(0, "default_value", "") : value;
            }
            case "list" -> new ArrayList<Object>(PyValues.iterate(value));
            case "string" -> value instanceof Markup ? value : PyRepr.str(value);
            case "int" -> toInt(value, a);
            case "float" -> toFloat(value, a);
            case "abs" -> {
                if (PyValues.isInt(value)) {
                    yield Math.abs(PyValues.toLong(value));
                }
                if (PyValues.isFloat(value)) {
                    yield Math.abs(PyValues.toDouble(value));
                }
                throw new ChatTemplateException("bad operand type for abs(): '" + PyRepr.typeName(value) + "'");
            }
            case "round" -> round(value, a);
            case "replace" -> PyStrings.replace(softStr(value), PyRepr.str(a.required(0, "old")),
                    PyRepr.str(a.required(1, "new")), (int) a.optionalLong(2, "count", -1));
            case "items" -> {
                if (value instanceof Undefined) {
                    yield List.of();
                }
                if (!(value instanceof Map<?, ?> m)) {
                    throw new ChatTemplateException("Can only get item pairs from a mapping.");
                }
                yield PyMethods.call(m, "items", List.of(), Map.of());
            }
            case "dictsort" -> dictsort(value, a);
            case "selectattr", "rejectattr" -> selectAttribute(value, a, name.equals("selectattr"));
            case "select", "reject" -> select(value, a, name.equals("select"));
            case "map" -> map(value, a);
            case "unique" -> unique(value, a);
            case "reverse" -> {
                if (PyValues.isString(value)) {
                    yield PyValues.slice(value, null, null, -1L);
                }
                List<Object> items = new ArrayList<>(PyValues.iterate(value));
                java.util.Collections.reverse(items);
                yield items;
            }
            case "sort" -> sort(value, a);
            case "min", "max" -> minMax(value, a, name.equals("max"));
            case "sum" -> {
                Object total = a.optional(2, "start", 0L);
                Function<Object, Object> getter = attributeGetter(a.optional(1, "attribute", null), null, false);
                for (Object item : PyValues.iterate(value)) {
                    total = PyValues.binary("+", total, getter.apply(item));
                }
                yield total;
            }
            case "safe" -> value instanceof Markup ? value : new Markup(PyRepr.str(value));
            case "e", "escape", "forceescape" -> value instanceof Markup && !name.equals("forceescape")
                    ? value : new Markup(Markup.escape(PyRepr.str(value)));
            case "indent" -> indent(softStr(value), a);
            case "center" -> PyMethods.call(softStr(value), "center", List.of(a.optional(0, "width", 80L)), Map.of());
            case "wordcount" -> {
                Matcher m = WORD.matcher(softStr(value));
                long n = 0;
                while (m.find()) {
                    n++;
                }
                yield n;
            }
            case "batch" -> batch(value, a);
            case "attr" -> attribute(value, a.string(0, "name"));
            case "pprint" -> PyRepr.repr(value);
            default -> throw new ChatTemplateException("No filter named '" + name + "'.");
        };
    }

    /** The attr filter is Python's getattr alone: unlike {@code x.name} it never falls back to a dict key. */
    private static Object attribute(Object value, String name) {
        if (value instanceof Namespace || value instanceof LoopContext || value instanceof Undefined) {
            return PyValues.getAttribute(value, name);
        }
        return PyMethods.isMethod(value, name) ? PyMethods.bind(value, name) : Undefined.attribute(value, name);
    }

    private static String softStr(Object value) {
        return PyRepr.str(value);
    }

    /** transformers: {@code tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)}. */
    private static String toJson(Object value, Arguments a) {
        boolean ensureAscii = a.flag(0, "ensure_ascii", false);
        Object indent = a.optional(1, "indent", null);
        Object separators = a.optional(2, "separators", null);
        boolean sortKeys = a.flag(3, "sort_keys", false);
        String indentText = switch (indent) {
            case null -> null;
            case String s -> s;
            default -> " ".repeat((int) Math.max(0, PyValues.toLong(indent)));
        };
        String itemSeparator = null;
        String keySeparator = null;
        if (separators instanceof List<?> seps && seps.size() == 2) {
            itemSeparator = PyValues.text(seps.get(0));
            keySeparator = PyValues.text(seps.get(1));
        }
        return new JsonDumps(indentText, itemSeparator, keySeparator, sortKeys, ensureAscii).encode(value);
    }

    /** Jinja2's title: capitalise each chunk after a run of "-", whitespace or opening brackets. */
    private static String title(String s) {
        StringBuilder out = new StringBuilder();
        Matcher m = WORD_BEGINNING.matcher(s);
        int last = 0;
        while (m.find()) {
            titleChunk(out, s.substring(last, m.start()));
            titleChunk(out, m.group());
            last = m.end();
        }
        titleChunk(out, s.substring(last));
        return out.toString();
    }

    private static void titleChunk(StringBuilder out, String chunk) {
        if (chunk.isEmpty()) {
            return;
        }
        int first = Character.charCount(chunk.codePointAt(0));
        out.append(PyStrings.upper(chunk.substring(0, first))).append(PyStrings.lower(chunk.substring(first)));
    }

    private static String join(Object value, Arguments a) {
        String separator = PyRepr.str(a.optional(0, "d", ""));
        Function<Object, Object> getter = attributeGetter(a.optional(1, "attribute", null), null, false);
        StringBuilder out = new StringBuilder();
        boolean first = true;
        for (Object item : PyValues.iterate(value)) {
            if (!first) {
                out.append(separator);
            }
            first = false;
            out.append(PyRepr.str(getter.apply(item)));
        }
        return out.toString();
    }

    private static Object toInt(Object value, Arguments a) {
        Object fallback = a.optional(0, "default", 0L);
        if (value instanceof Undefined u) {
            throw u.fail();
        }
        if (PyValues.isInt(value)) {
            return PyValues.toLong(value);
        }
        if (PyValues.isFloat(value)) {
            double d = PyValues.toDouble(value);
            return Double.isFinite(d) ? (Object) (long) d : fallback;
        }
        if (PyValues.isString(value)) {
            String s = PyStrings.strip(PyValues.text(value), null, true, true).replace("_", "");
            try {
                return Long.parseLong(s, (int) a.optionalLong(1, "base", 10));
            } catch (NumberFormatException e) {
                try {
                    double d = Double.parseDouble(s);
                    return Double.isFinite(d) ? (Object) (long) d : fallback;
                } catch (NumberFormatException e2) {
                    return fallback;
                }
            }
        }
        return fallback;
    }

    private static Object toFloat(Object value, Arguments a) {
        Object fallback = a.optional(0, "default", 0.0);
        if (value instanceof Undefined u) {
            throw u.fail();
        }
        if (PyValues.isNumber(value)) {
            return PyValues.toDouble(value);
        }
        if (PyValues.isString(value)) {
            String s = PyStrings.strip(PyValues.text(value), null, true, true);
            try {
                return switch (PyStrings.lower(s)) {
                    case "inf", "+inf", "infinity", "+infinity" -> Double.POSITIVE_INFINITY;
                    case "-inf", "-infinity" -> Double.NEGATIVE_INFINITY;
                    case "nan", "+nan", "-nan" -> Double.NaN;
                    default -> s.matches("[+-]?(\\d[\\d_]*\\.?[\\d_]*|\\.\\d[\\d_]*)([eE][+-]?\\d+)?")
                            ? Double.parseDouble(s.replace("_", "")) : fallback;
                };
            } catch (NumberFormatException e) {
                return fallback;
            }
        }
        return fallback;
    }

    /** Python's round(): half-even on the exact binary value; Jinja2 always passes a precision, so floats stay floats. */
    private static Object round(Object value, Arguments a) {
        int precision = (int) a.optionalLong(0, "precision", 0);
        String method = a.optionalString(1, "method");
        if (PyValues.isInt(value) && (method == null || method.equals("common"))) {
            return PyValues.toLong(value);
        }
        double d = PyValues.toDouble(value);
        if (!Double.isFinite(d)) {
            return d;
        }
        RoundingMode mode = switch (method == null ? "common" : method) {
            case "common" -> RoundingMode.HALF_EVEN;
            case "ceil" -> RoundingMode.CEILING;
            case "floor" -> RoundingMode.FLOOR;
            default -> throw new ChatTemplateException("method must be common, ceil or floor");
        };
        return new BigDecimal(d).setScale(precision, mode).doubleValue();
    }

    private static Object dictsort(Object value, Arguments a) {
        if (!(value instanceof Map<?, ?> m)) {
            throw new ChatTemplateException("dictsort filter needs a mapping");
        }
        boolean caseSensitive = a.flag(0, "case_sensitive", false);
        String by = a.optionalString(1, "by");
        int position = by == null || by.equals("key") ? 0 : by.equals("value") ? 1 : -1;
        if (position < 0) {
            throw new ChatTemplateException("You can only sort by either \"key\" or \"value\"");
        }
        List<Object> items = new ArrayList<>();
        m.forEach((k, v) -> items.add(new PyTuple(k, v)));
        Function<Object, Object> key = item -> caseSensitive ? ((PyTuple) item).get(position)
                : ignoreCase(((PyTuple) item).get(position));
        items.sort(comparator(key, a.flag(2, "reverse", false)));
        return items;
    }

    private static Comparator<Object> comparator(Function<Object, Object> key, boolean reverse) {
        Comparator<Object> c = (x, y) -> PyValues.compare(key.apply(x), key.apply(y), "<");
        return reverse ? c.reversed() : c;
    }

    private static Object ignoreCase(Object v) {
        return PyValues.isString(v) ? PyStrings.lower(PyValues.text(v)) : v;
    }

    /**
     * Jinja2's make_attrgetter: "a.b.0" walks items (digits become indexes) with getitem semantics;
     * a null attribute is the item itself.
     */
    static Function<Object, Object> attributeGetter(Object attribute, Object fallback, boolean lowerStrings) {
        if (attribute == null) {
            return lowerStrings ? BuiltinFilters::ignoreCase : item -> item;
        }
        List<Object> path = new ArrayList<>();
        if (PyValues.isInt(attribute)) {
            path.add(PyValues.toLong(attribute));
        } else {
            for (String part : PyValues.text(attribute).split("\\.")) {
                path.add(!part.isEmpty() && part.chars().allMatch(Character::isDigit) ? (Object) Long.parseLong(part) : part);
            }
        }
        return item -> {
            Object v = item;
            for (Object part : path) {
                v = PyValues.getItem(v, part);
            }
            if (fallback != null && v instanceof Undefined) {
                v = fallback;
            }
            return lowerStrings ? ignoreCase(v) : v;
        };
    }

    private static List<Object> selectAttribute(Object value, Arguments a, boolean keep) {
        Function<Object, Object> getter = attributeGetter(a.required(0, "attribute"), null, false);
        return filterBy(value, getter, a.args().size() > 1 ? a.args().subList(1, a.args().size()) : List.of(), a.kwargs(), keep);
    }

    private static List<Object> select(Object value, Arguments a, boolean keep) {
        return filterBy(value, item -> item, a.args(), a.kwargs(), keep);
    }

    /** Shared by select/reject/selectattr/rejectattr: {@code testArgs} is [test name, test args...] or empty for truthiness. */
    private static List<Object> filterBy(Object value, Function<Object, Object> getter, List<Object> testArgs,
            Map<String, Object> kwargs, boolean keep) {
        List<Object> out = new ArrayList<>();
        for (Object item : PyValues.iterate(value)) {
            Object subject = getter.apply(item);
            boolean passes = testArgs.isEmpty() ? PyValues.truthy(subject)
                    : BuiltinTests.test(PyValues.text(testArgs.getFirst()), subject,
                            new Arguments("test", testArgs.subList(1, testArgs.size()), kwargs));
            if (passes == keep) {
                out.add(item);
            }
        }
        return out;
    }

    private static List<Object> map(Object value, Arguments a) {
        List<Object> out = new ArrayList<>();
        if (a.args().isEmpty() && a.kwargs().containsKey("attribute")) {
            Function<Object, Object> getter = attributeGetter(a.kwargs().get("attribute"), a.kwargs().get("default"), false);
            for (Object item : PyValues.iterate(value)) {
                out.add(getter.apply(item));
            }
            return out;
        }
        if (a.args().isEmpty()) {
            throw new ChatTemplateException("map requires a filter argument");
        }
        String filter = PyValues.text(a.args().getFirst());
        Arguments rest = new Arguments(filter, a.args().subList(1, a.args().size()), a.kwargs());
        for (Object item : PyValues.iterate(value)) {
            out.add(apply(filter, item, rest));
        }
        return out;
    }

    private static List<Object> unique(Object value, Arguments a) {
        Function<Object, Object> getter = attributeGetter(a.optional(1, "attribute", null), null, !a.flag(0, "case_sensitive", false));
        List<Object> seen = new ArrayList<>();
        List<Object> out = new ArrayList<>();
        for (Object item : PyValues.iterate(value)) {
            Object key = getter.apply(item);
            if (seen.stream().noneMatch(s -> PyValues.equal(s, key))) {
                seen.add(key);
                out.add(item);
            }
        }
        return out;
    }

    private static List<Object> sort(Object value, Arguments a) {
        Function<Object, Object> key = attributeGetter(a.optional(2, "attribute", null), null, !a.flag(1, "case_sensitive", false));
        List<Object> items = new ArrayList<>(PyValues.iterate(value));
        items.sort(comparator(key, a.flag(0, "reverse", false)));
        return items;
    }

    private static Object minMax(Object value, Arguments a, boolean max) {
        Function<Object, Object> key = attributeGetter(a.optional(1, "attribute", null), null, !a.flag(0, "case_sensitive", false));
        List<?> items = PyValues.iterate(value);
        if (items.isEmpty()) {
            return new Undefined("No aggregated item, sequence was empty.");
        }
        Object best = items.getFirst();
        for (Object item : items) {
            int c = PyValues.compare(key.apply(item), key.apply(best), max ? ">" : "<");
            if (max ? c > 0 : c < 0) {
                best = item;
            }
        }
        return best;
    }

    private static String indent(String s, Arguments a) {
        Object width = a.optional(0, "width", 4L);
        String indention = PyValues.isString(width) ? PyValues.text(width) : " ".repeat((int) PyValues.toLong(width));
        boolean first = a.flag(1, "first", false);
        boolean blank = a.flag(2, "blank", false);
        @SuppressWarnings("unchecked")
        List<Object> lines = (List<Object>) PyMethods.call(s + "\n", "splitlines", List.of(), Map.of());
        StringBuilder out = new StringBuilder();
        if (blank) {
            for (int i = 0; i < lines.size(); i++) {
                if (i > 0) {
                    out.append('\n').append(indention);
                }
                out.append(lines.get(i));
            }
        } else {
            out.append(lines.getFirst());
            for (int i = 1; i < lines.size(); i++) {
                String line = (String) lines.get(i);
                out.append('\n').append(line.isEmpty() ? "" : indention + line);
            }
        }
        return first ? indention + out : out.toString();
    }

    private static List<Object> batch(Object value, Arguments a) {
        long size = a.optionalLong(0, "linecount", 1);
        Object fill = a.optional(1, "fill_with", null);
        boolean doFill = a.args().size() > 1 || a.kwargs().containsKey("fill_with");
        List<Object> out = new ArrayList<>();
        List<Object> row = new ArrayList<>();
        for (Object item : PyValues.iterate(value)) {
            if (row.size() == size) {
                out.add(row);
                row = new ArrayList<>();
            }
            row.add(item);
        }
        if (!row.isEmpty()) {
            while (doFill && fill != null && row.size() < size) {
                row.add(fill);
            }
            out.add(row);
        }
        return out;
    }
}
