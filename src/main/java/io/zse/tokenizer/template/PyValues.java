package io.zse.tokenizer.template;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Python value semantics on plain Java values (String, Long/Integer, Double, Boolean, null, List, Map):
 * truthiness, equality, ordering, arithmetic, attribute and item lookup as Jinja2's sandboxed environment does them.
 */
final class PyValues {
    private PyValues() {
    }

    static boolean truthy(Object v) {
        return switch (v) {
            case null -> false;
            case Boolean b -> b;
            case String s -> !s.isEmpty();
            case Markup m -> !m.text().isEmpty();
            case Double d -> d != 0;
            case Float f -> f != 0;
            case BigDecimal d -> d.signum() != 0;
            case BigInteger i -> i.signum() != 0;
            case Number n -> n.longValue() != 0;
            case List<?> l -> !l.isEmpty();
            case Map<?, ?> m -> !m.isEmpty();
            case Undefined u -> false;
            default -> true;
        };
    }

    // ---- numbers: Python int is Long here (bool counts as int), float is Double ----

    static boolean isInt(Object v) {
        return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger || v instanceof Boolean;
    }

    static boolean isFloat(Object v) {
        return v instanceof Double || v instanceof Float || v instanceof BigDecimal;
    }

    static boolean isNumber(Object v) {
        return isInt(v) || isFloat(v);
    }

    static long toLong(Object v) {
        return v instanceof Boolean b ? (b ? 1 : 0) : ((Number) v).longValue();
    }

    static double toDouble(Object v) {
        return v instanceof Boolean b ? (b ? 1 : 0) : ((Number) v).doubleValue();
    }

    static String text(Object v) {
        return v instanceof Markup m ? m.text() : (String) v;
    }

    static boolean isString(Object v) {
        return v instanceof String || v instanceof Markup;
    }

    // ---- equality and ordering ----

    static boolean equal(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a == null || b == null) {
            return false;
        }
        if (isNumber(a) && isNumber(b)) {
            return isInt(a) && isInt(b) ? toLong(a) == toLong(b) : toDouble(a) == toDouble(b);
        }
        if (isString(a) && isString(b)) {
            return text(a).equals(text(b));
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size() || (a instanceof PyTuple) != (b instanceof PyTuple)) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!equal(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (Map.Entry<?, ?> e : x.entrySet()) {
                Object other = lookupKey(y, e.getKey());
                if (other == MISSING || !equal(e.getValue(), other)) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Undefined || b instanceof Undefined) {
            return a instanceof Undefined && b instanceof Undefined;
        }
        return a.equals(b);
    }

    static int compare(Object a, Object b, String op) {
        if (a instanceof Undefined u) {
            throw u.fail();
        }
        if (b instanceof Undefined u) {
            throw u.fail();
        }
        if (isNumber(a) && isNumber(b)) {
            return isInt(a) && isInt(b) ? Long.compare(toLong(a), toLong(b)) : Double.compare(toDouble(a), toDouble(b));
        }
        if (isString(a) && isString(b)) {
            return text(a).compareTo(text(b));
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
                if (!equal(x.get(i), y.get(i))) {
                    return compare(x.get(i), y.get(i), op);
                }
            }
            return Integer.compare(x.size(), y.size());
        }
        throw new ChatTemplateException("'" + op + "' not supported between instances of '" + PyRepr.typeName(a)
                + "' and '" + PyRepr.typeName(b) + "'");
    }

    static boolean contains(Object container, Object item) {
        return switch (container) {
            case String s -> {
                if (!isString(item)) {
                    throw new ChatTemplateException(
                            "'in <string>' requires string as left operand, not " + PyRepr.typeName(item));
                }
                yield s.contains(text(item));
            }
            case Markup m -> contains(m.text(), item);
            case Map<?, ?> m -> lookupKey(m, item) != MISSING;
            case List<?> l -> l.stream().anyMatch(x -> equal(x, item));
            case Undefined u -> false;
            case null, default -> throw new ChatTemplateException(
                    "argument of type '" + PyRepr.typeName(container) + "' is not iterable");
        };
    }

    // ---- arithmetic ----

    static Object binary(String op, Object a, Object b) {
        if (a instanceof Undefined u) {
            throw u.fail();
        }
        if (b instanceof Undefined u) {
            throw u.fail();
        }
        if (isNumber(a) && isNumber(b)) {
            return numeric(op, a, b);
        }
        switch (op) {
            case "+" -> {
                if (a instanceof Markup || b instanceof Markup) {
                    if (isString(a) && isString(b)) {
                        return new Markup(markupText(a) + markupText(b));
                    }
                } else if (a instanceof String x && b instanceof String y) {
                    return x + y;
                }
                if (a instanceof List<?> x && b instanceof List<?> y && (a instanceof PyTuple) == (b instanceof PyTuple)) {
                    List<Object> joined = new ArrayList<>(x);
                    joined.addAll(y);
                    return a instanceof PyTuple ? PyTuple.of(joined) : joined;
                }
                if (isString(a)) {
                    throw new ChatTemplateException(
                            "can only concatenate str (not \"" + PyRepr.typeName(b) + "\") to str");
                }
                if (a instanceof List<?> && !(a instanceof PyTuple)) {
                    throw new ChatTemplateException(
                            "can only concatenate list (not \"" + PyRepr.typeName(b) + "\") to list");
                }
            }
            case "*" -> {
                if (isInt(b) && (isString(a) || a instanceof List)) {
                    return repeat(a, toLong(b));
                }
                if (isInt(a) && (isString(b) || b instanceof List)) {
                    return repeat(b, toLong(a));
                }
            }
            default -> { }
        }
        throw new ChatTemplateException("unsupported operand type(s) for " + op + ": '" + PyRepr.typeName(a)
                + "' and '" + PyRepr.typeName(b) + "'");
    }

    private static String markupText(Object v) {
        return v instanceof Markup m ? m.text() : Markup.escape((String) v);
    }

    private static Object repeat(Object seq, long times) {
        if (isString(seq)) {
            return text(seq).repeat((int) Math.max(0, times));
        }
        List<Object> out = new ArrayList<>();
        for (long i = 0; i < times; i++) {
            out.addAll((List<?>) seq);
        }
        return seq instanceof PyTuple ? PyTuple.of(out) : out;
    }

    private static Object numeric(String op, Object a, Object b) {
        boolean ints = isInt(a) && isInt(b);
        if (ints) {
            long x = toLong(a);
            long y = toLong(b);
            switch (op) {
                case "+" -> { return x + y; }
                case "-" -> { return x - y; }
                case "*" -> { return x * y; }
                case "//" -> { return Math.floorDiv(x, nonZero(y)); }
                case "%" -> { return Math.floorMod(x, nonZero(y)); }
                case "**" -> {
                    if (y >= 0) {
                        return BigInteger.valueOf(x).pow((int) y).longValue();
                    }
                    return Math.pow(x, y);
                }
                case "/" -> { return (double) x / nonZero(y); }
                default -> throw new IllegalStateException(op);
            }
        }
        double x = toDouble(a);
        double y = toDouble(b);
        return switch (op) {
            case "+" -> x + y;
            case "-" -> x - y;
            case "*" -> x * y;
            case "/" -> x / nonZero(y);
            case "//" -> Math.floor(x / nonZero(y));
            case "%" -> {
                double r = x % nonZero(y);
                yield (r != 0 && (r < 0) != (y < 0)) ? r + y : r;
            }
            case "**" -> Math.pow(x, y);
            default -> throw new IllegalStateException(op);
        };
    }

    private static long nonZero(long y) {
        if (y == 0) {
            throw new ChatTemplateException("integer division or modulo by zero");
        }
        return y;
    }

    private static double nonZero(double y) {
        if (y == 0) {
            throw new ChatTemplateException("float division by zero");
        }
        return y;
    }

    static Object negate(Object v) {
        if (v instanceof Undefined u) {
            throw u.fail();
        }
        if (isInt(v)) {
            return -toLong(v);
        }
        if (isFloat(v)) {
            return -toDouble(v);
        }
        throw new ChatTemplateException("bad operand type for unary -: '" + PyRepr.typeName(v) + "'");
    }

    // ---- lookup ----

    static final Object MISSING = new Object();

    /** Dict lookup with Python key equality (1 == 1.0 == True), so JSON Integer keys match template Long keys. */
    static Object lookupKey(Map<?, ?> map, Object key) {
        Object v = map.get(key);
        if (v != null || map.containsKey(key)) {
            return v;
        }
        if (key instanceof Markup m) {
            return lookupKey(map, m.text());
        }
        if (isNumber(key)) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (isNumber(e.getKey()) && equal(e.getKey(), key)) {
                    return e.getValue();
                }
            }
        }
        return MISSING;
    }

    /** {@code obj.name}: a Python attribute (method) first, then the item, as Jinja2's getattr does. */
    static Object getAttribute(Object obj, String name) {
        switch (obj) {
            case null -> {
                return Undefined.attribute(null, name);
            }
            case Undefined u -> throw u.fail();
            case Map<?, ?> m -> {
                if (PyMethods.isMethod(obj, name)) {
                    return PyMethods.bind(obj, name);
                }
                Object v = lookupKey(m, name);
                return v == MISSING ? Undefined.attribute(obj, name) : v;
            }
            case Namespace ns -> {
                Object v = ns.attributes.get(name);
                return v != null || ns.attributes.containsKey(name) ? v : Undefined.attribute(obj, name);
            }
            case LoopContext loop -> {
                return loop.attribute(name);
            }
            default -> {
                return PyMethods.isMethod(obj, name) ? PyMethods.bind(obj, name) : Undefined.attribute(obj, name);
            }
        }
    }

    /** {@code obj[key]}: the item first, then a Python attribute, as Jinja2's getitem does. */
    static Object getItem(Object obj, Object key) {
        switch (obj) {
            case null -> {
                return Undefined.attribute(null, key);
            }
            case Undefined u -> throw u.fail();
            case Map<?, ?> m -> {
                Object v = lookupKey(m, key);
                if (v != MISSING) {
                    return v;
                }
            }
            case List<?> l -> {
                if (isInt(key)) {
                    long i = toLong(key);
                    long index = i < 0 ? i + l.size() : i;
                    return index >= 0 && index < l.size() ? l.get((int) index) : Undefined.attribute(obj, key);
                }
            }
            case String s -> {
                if (isInt(key)) {
                    return charAt(s, toLong(key), obj, key);
                }
            }
            case Markup m -> {
                if (isInt(key)) {
                    return charAt(m.text(), toLong(key), obj, key);
                }
            }
            default -> { }
        }
        return key instanceof String name ? getAttribute(obj, name) : Undefined.attribute(obj, key);
    }

    private static Object charAt(String s, long i, Object owner, Object key) {
        int[] cps = PyStrings.codePoints(s);
        long index = i < 0 ? i + cps.length : i;
        if (index < 0 || index >= cps.length) {
            return Undefined.attribute(owner, key);
        }
        return new String(cps, (int) index, 1);
    }

    /** Python slicing {@code obj[start:stop:step]} on lists, tuples and strings (by code point). */
    static Object slice(Object obj, Object start, Object stop, Object step) {
        if (obj instanceof Undefined u) {
            throw u.fail();
        }
        long stepValue = step == null ? 1 : toLong(step);
        if (stepValue == 0) {
            throw new ChatTemplateException("slice step cannot be zero");
        }
        if (isString(obj)) {
            int[] cps = PyStrings.codePoints(text(obj));
            StringBuilder out = new StringBuilder();
            for (int i : sliceIndices(cps.length, start, stop, stepValue)) {
                out.appendCodePoint(cps[i]);
            }
            return out.toString();
        }
        if (obj instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            for (int i : sliceIndices(list.size(), start, stop, stepValue)) {
                out.add(list.get(i));
            }
            return obj instanceof PyTuple ? PyTuple.of(out) : out;
        }
        throw new ChatTemplateException("'" + PyRepr.typeName(obj) + "' object is not subscriptable");
    }

    private static int[] sliceIndices(int length, Object start, Object stop, long step) {
        long lo;
        long hi;
        if (step > 0) {
            lo = start == null ? 0 : clamp(toLong(start), length, 0, length);
            hi = stop == null ? length : clamp(toLong(stop), length, 0, length);
        } else {
            lo = start == null ? length - 1 : clamp(toLong(start), length, -1, length - 1);
            hi = stop == null ? -1 : clamp(toLong(stop), length, -1, length - 1);
        }
        List<Integer> indices = new ArrayList<>();
        for (long i = lo; step > 0 ? i < hi : i > hi; i += step) {
            indices.add((int) i);
        }
        return indices.stream().mapToInt(Integer::intValue).toArray();
    }

    private static long clamp(long index, int length, long min, long max) {
        long i = index < 0 ? index + length : index;
        return Math.max(min, Math.min(max, i));
    }

    // ---- iteration and size ----

    static List<?> iterate(Object v) {
        return switch (v) {
            case List<?> l -> l;
            case Map<?, ?> m -> new ArrayList<>(m.keySet());
            case String s -> codePointStrings(s);
            case Markup m -> codePointStrings(m.text());
            case Undefined u -> List.of();
            case null, default -> throw new ChatTemplateException("'" + PyRepr.typeName(v) + "' object is not iterable");
        };
    }

    private static List<Object> codePointStrings(String s) {
        List<Object> out = new ArrayList<>(s.length());
        s.codePoints().forEach(cp -> out.add(new String(new int[] {cp}, 0, 1)));
        return out;
    }

    static long length(Object v) {
        return switch (v) {
            case String s -> PyStrings.length(s);
            case Markup m -> PyStrings.length(m.text());
            case List<?> l -> l.size();
            case Map<?, ?> m -> m.size();
            case Undefined u -> 0;
            case null, default -> throw new ChatTemplateException("object of type '" + PyRepr.typeName(v) + "' has no len()");
        };
    }

    static Iterator<?> iterator(Object v) {
        return iterate(v).iterator();
    }
}
