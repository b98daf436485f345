package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Python's printf-style {@code "fmt" % args} for the common conversions (s, r, d, i, f, x, %). */
final class PercentFormat {
    private static final Pattern SPEC = Pattern.compile("%(\\(([^)]*)\\))?([-+ 0#]*)(\\d+)?(?:\\.(\\d+))?([sridfFxXeEgGc%])");

    private PercentFormat() {
    }

    static String format(String template, Object args) {
        List<?> positional = args instanceof PyTuple t ? t : List.of(args == null ? NONE : args);
        StringBuilder out = new StringBuilder();
        Matcher m = SPEC.matcher(template);
        int last = 0;
        int next = 0;
        while (m.find()) {
            out.append(template, last, m.start());
            last = m.end();
            char conversion = m.group(6).charAt(0);
            if (conversion == '%') {
                out.append('%');
                continue;
            }
            Object value;
            if (m.group(2) != null) {
                if (!(args instanceof Map<?, ?> map)) {
                    throw new ChatTemplateException("format requires a mapping");
                }
                value = map.get(m.group(2));
            } else {
                if (next >= positional.size()) {
                    throw new ChatTemplateException("not enough arguments for format string");
                }
                value = positional.get(next++);
                value = value == NONE ? null : value;
            }
            String flags = m.group(3);
            String text = convert(conversion, value, m.group(5));
            if (flags.contains("+") && PyValues.isNumber(value) && PyValues.toDouble(value) >= 0) {
                text = "+" + text;
            }
            int width = m.group(4) == null ? 0 : Integer.parseInt(m.group(4));
            int pad = width - PyStrings.length(text);
            if (pad > 0) {
                text = flags.contains("-") ? text + " ".repeat(pad)
                        : flags.contains("0") && PyValues.isNumber(value) ? "0".repeat(pad) + text : " ".repeat(pad) + text;
            }
            out.append(text);
        }
        if (next < positional.size() && !(args instanceof Map)) {
            throw new ChatTemplateException("not all arguments converted during string formatting");
        }
        return out.append(template, last, template.length()).toString();
    }

    private static final Object NONE = new Object();

    private static String convert(char conversion, Object value, String precision) {
        return switch (conversion) {
            case 's' -> PyRepr.str(value);
            case 'r' -> PyRepr.repr(value);
            case 'c' -> PyValues.isInt(value) ? Character.toString((int) PyValues.toLong(value)) : PyRepr.str(value);
            case 'd', 'i' -> String.valueOf(PyValues.isFloat(value) ? (long) PyValues.toDouble(number(value))
                    : PyValues.toLong(number(value)));
            case 'x' -> Long.toHexString(PyValues.toLong(number(value)));
            case 'X' -> Long.toHexString(PyValues.toLong(number(value))).toUpperCase();
            default -> String.format(java.util.Locale.ROOT, "%." + (precision == null ? 6 : Integer.parseInt(precision))
                    + (conversion == 'F' ? 'f' : conversion), PyValues.toDouble(number(value)));
        };
    }

    private static Object number(Object value) {
        if (!PyValues.isNumber(value)) {
            throw new ChatTemplateException("%d format: a real number is required, not " + PyRepr.typeName(value));
        }
        return value;
    }
}
