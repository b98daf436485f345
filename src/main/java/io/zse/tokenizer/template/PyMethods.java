package io.zse.tokenizer.template;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Python methods templates call on values ({@code content.strip()}, {@code tools.get(...)}). Methods that would
 * mutate a list or dict are refused, as transformers' ImmutableSandboxedEnvironment refuses them.
 */
final class PyMethods {
    private static final Set<String> STRING_METHODS = Set.of("strip", "lstrip", "rstrip", "startswith", "endswith",
            "split", "rsplit", "splitlines", "upper", "lower", "title", "capitalize", "swapcase", "casefold", "replace",
            "find", "rfind", "index", "rindex", "count", "join", "format", "isdigit", "isnumeric", "isdecimal",
            "isalpha", "isalnum", "isspace", "islower", "isupper", "zfill", "ljust", "rjust", "center", "partition",
            "rpartition");
    private static final Set<String> DICT_METHODS = Set.of("get", "items", "keys", "values", "copy");
    private static final Set<String> DICT_MUTATORS = Set.of("clear", "pop", "popitem", "setdefault", "update");
    private static final Set<String> LIST_METHODS = Set.of("index", "count", "copy");
    private static final Set<String> LIST_MUTATORS =
            Set.of("append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear");

    private PyMethods() {
    }

    static boolean isMethod(Object self, String name) {
        return switch (self) {
            case String s -> STRING_METHODS.contains(name);
            case Markup m -> STRING_METHODS.contains(name);
            case Map<?, ?> m -> DICT_METHODS.contains(name) || DICT_MUTATORS.contains(name);
            case PyTuple t -> name.equals("index") || name.equals("count");
            case List<?> l -> LIST_METHODS.contains(name) || LIST_MUTATORS.contains(name);
            case null, default -> false;
        };
    }

    /** The bound method, or for a mutating one the Undefined the sandbox hands out (it fails when called). */
    static Object bind(Object self, String name) {
        boolean unsafe = (self instanceof Map && DICT_MUTATORS.contains(name))
                || (self instanceof List && !(self instanceof PyTuple) && LIST_MUTATORS.contains(name));
        if (unsafe) {
            return new Undefined("access to attribute '" + name + "' of '" + PyRepr.typeName(self)
                    + "' object is unsafe.");
        }
        return new BoundMethod(self, name);
    }

    static Object call(Object self, String name, List<Object> args, Map<String, Object> kwargs) {
        return switch (self) {
            case String s -> callString(s, name, new Arguments(name, args, kwargs));
            case Markup m -> callString(m.text(), name, new Arguments(name, args, kwargs));
            case Map<?, ?> m -> callDict(m, name, new Arguments(name, args, kwargs));
            case List<?> l -> callList(l, name, new Arguments(name, args, kwargs));
            default -> throw new ChatTemplateException("'" + PyRepr.typeName(self) + "' has no method " + name);
        };
    }

    private static Object callString(String s, String name, Arguments a) {
        return switch (name) {
            case "strip" -> PyStrings.strip(s, a.optionalString(0, "chars"), true, true);
            case "lstrip" -> PyStrings.strip(s, a.optionalString(0, "chars"), true, false);
            case "rstrip" -> PyStrings.strip(s, a.optionalString(0, "chars"), false, true);
            case "startswith", "endswith" -> {
                Object prefixes = a.required(0, "prefix");
                List<?> options = prefixes instanceof List<?> l ? l : List.of(prefixes);
                boolean start = name.equals("startswith");
                yield options.stream().anyMatch(o -> start ? s.startsWith(PyValues.text(o)) : s.endsWith(PyValues.text(o)));
            }
            case "split" -> PyStrings.split(s, a.optionalString(0, "sep"), (int) a.optionalLong(1, "maxsplit", -1));
            case "rsplit" -> PyStrings.rsplit(s, a.optionalString(0, "sep"), (int) a.optionalLong(1, "maxsplit", -1));
            case "splitlines" -> {
                List<Object> lines = new ArrayList<>(List.of((Object[]) s.split("\r\n|[\n\r\u000b\f\u001c\u001d\u001e\u0085\u2028\u2029]", -1)));
                if (!lines.isEmpty() && "".equals(lines.getLast())) {
                    lines.removeLast();
                }
                yield lines;
            }
            case "upper" -> PyStrings.upper(s);
            case "lower", "casefold" -> PyStrings.lower(s);
            case "title" -> PyStrings.title(s);
            case "capitalize" -> PyStrings.capitalize(s);
            case "swapcase" -> {
                StringBuilder out = new StringBuilder();
                s.codePoints().forEach(cp -> out.appendCodePoint(
                        Character.isUpperCase(cp) ? Character.toLowerCase(cp) : Character.toUpperCase(cp)));
                yield out.toString();
            }
            case "replace" -> PyStrings.replace(s, a.string(0, "old"), a.string(1, "new"),
                    (int) a.optionalLong(2, "count", -1));
            case "find" -> (long) PyStrings.find(s, a.string(0, "sub"), false);
            case "rfind" -> (long) PyStrings.find(s, a.string(0, "sub"), true);
            case "index", "rindex" -> {
                long at = PyStrings.find(s, a.string(0, "sub"), name.equals("rindex"));
                if (at < 0) {
                    throw new ChatTemplateException("substring not found");
                }
                yield at;
            }
            case "count" -> (long) PyStrings.count(s, a.string(0, "sub"));
            case "join" -> {
                StringBuilder out = new StringBuilder();
                boolean first = true;
                for (Object item : PyValues.iterate(a.required(0, "iterable"))) {
                    if (!PyValues.isString(item)) {
                        throw new ChatTemplateException("sequence item: expected str instance, "
                                + PyRepr.typeName(item) + " found");
                    }
                    if (!first) {
                        out.append(s);
                    }
                    first = false;
                    out.append(PyValues.text(item));
                }
                yield out.toString();
            }
            case "format" -> format(s, a);
            case "isdigit", "isnumeric", "isdecimal" -> !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            case "isalpha" -> !s.isEmpty() && s.codePoints().allMatch(Character::isLetter);
            case "isalnum" -> !s.isEmpty() && s.codePoints().allMatch(Character::isLetterOrDigit);
            case "isspace" -> !s.isEmpty() && s.codePoints().allMatch(PyStrings::isSpace);
            case "islower" -> s.codePoints().anyMatch(Character::isLowerCase)
                    && s.codePoints().noneMatch(cp -> Character.isUpperCase(cp) || Character.isTitleCase(cp));
            case "isupper" -> s.codePoints().anyMatch(Character::isUpperCase)
                    && s.codePoints().noneMatch(cp -> Character.isLowerCase(cp) || Character.isTitleCase(cp));
            case "zfill" -> {
                int width = (int) a.optionalLong(0, "width", 0);
                int pad = width - PyStrings.length(s);
                if (pad <= 0) {
                    yield s;
                }
                boolean sign = !s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+');
                yield sign ? s.charAt(0) + "0".repeat(pad) + s.substring(1) : "0".repeat(pad) + s;
            }
            case "ljust", "rjust", "center" -> {
                int pad = (int) a.optionalLong(0, "width", 0) - PyStrings.length(s);
                String fill = a.optionalString(1, "fillchar");
                fill = fill == null ? " " : fill;
                if (pad <= 0) {
                    yield s;
                }
                int left = switch (name) {
                    case "ljust" -> 0;
                    case "rjust" -> pad;
                    default -> pad / 2 + (pad & (PyStrings.length(s) + 1) & 1); // CPython's centring rule
                };
                yield fill.repeat(left) + s + fill.repeat(pad - left);
            }
            case "partition", "rpartition" -> {
                String sep = a.string(0, "sep");
                int at = name.equals("partition") ? s.indexOf(sep) : s.lastIndexOf(sep);
                if (at < 0) {
                    yield name.equals("partition") ? new PyTuple(s, "", "") : new PyTuple("", "", s);
                }
                yield new PyTuple(s.substring(0, at), sep, s.substring(at + sep.length()));
            }
            default -> throw new ChatTemplateException("'str' object has no attribute '" + name + "'");
        };
    }

    /** {@code str.format} with {}, {0} and {name} fields; format specs other than empty are refused. */
    private static String format(String s, Arguments a) {
        StringBuilder out = new StringBuilder();
        int auto = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '{' && i + 1 < s.length() && s.charAt(i + 1) == '{') {
                out.append('{');
                i++;
            } else if (c == '}' && i + 1 < s.length() && s.charAt(i + 1) == '}') {
                out.append('}');
                i++;
            } else if (c == '{') {
                int close = s.indexOf('}', i);
                if (close < 0) {
                    throw new ChatTemplateException("Single '{' encountered in format string");
                }
                String field = s.substring(i + 1, close);
                if (field.contains(":") || field.contains("!")) {
                    throw new ChatTemplateException("format specs are not supported: {" + field + "}");
                }
                Object value;
                if (field.isEmpty()) {
                    value = a.positional(auto++);
                } else if (field.chars().allMatch(Character::isDigit)) {
                    value = a.positional(Integer.parseInt(field));
                } else {
                    value = a.keyword(field);
                }
                out.append(PyRepr.str(value));
                i = close;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static Object callDict(Map<?, ?> m, String name, Arguments a) {
        return switch (name) {
            case "get" -> {
                Object v = PyValues.lookupKey(m, a.required(0, "key"));
                yield v == PyValues.MISSING ? a.optional(1, "default", null) : v;
            }
            case "items" -> {
                List<Object> items = new ArrayList<>(m.size());
                m.forEach((k, v) -> items.add(new PyTuple(k, v)));
                yield items;
            }
            case "keys" -> new ArrayList<Object>(m.keySet());
            case "values" -> new ArrayList<Object>(m.values());
            case "copy" -> new LinkedHashMap<Object, Object>(m);
            default -> throw new ChatTemplateException("'dict' object has no attribute '" + name + "'");
        };
    }

    private static Object callList(List<?> l, String name, Arguments a) {
        return switch (name) {
            case "index" -> {
                Object item = a.required(0, "value");
                for (int i = 0; i < l.size(); i++) {
                    if (PyValues.equal(l.get(i), item)) {
                        yield (long) i;
                    }
                }
                throw new ChatTemplateException(PyRepr.repr(item) + " is not in list");
            }
            case "count" -> {
                Object item = a.required(0, "value");
                yield l.stream().filter(x -> PyValues.equal(x, item)).count();
            }
            case "copy" -> new ArrayList<Object>(l);
            default -> throw new ChatTemplateException("'list' object has no attribute '" + name + "'");
        };
    }
}
