package io.zse.tokenizer.template;

import java.math.BigDecimal;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** Python's {@code str()} and {@code repr()} of template values, which is what {@code {{ x }}} prints. */
final class PyRepr {
    private PyRepr() {
    }

    /** {@code str(value)}; Undefined prints as "" like Jinja2. */
    static String str(Object value) {
        return switch (value) {
            case null -> "None";
            case String s -> s;
            case Markup m -> m.text();
            case Undefined u -> "";
            default -> repr(value);
        };
    }

    static String repr(Object value) {
        StringBuilder out = new StringBuilder();
        appendRepr(out, value);
        return out.toString();
    }

    private static void appendRepr(StringBuilder out, Object value) {
        switch (value) {
            case null -> out.append("None");
            case String s -> appendStringRepr(out, s);
            case Markup m -> out.append("Markup(").append(repr(m.text())).append(')');
            case Boolean b -> out.append(b ? "True" : "False");
            case Double d -> out.append(floatRepr(d));
            case Float f -> out.append(floatRepr(f.doubleValue()));
            case BigDecimal d -> out.append(floatRepr(d.doubleValue()));
            case Number n -> out.append(n);
            case PyTuple t -> {
                out.append('(');
                appendItems(out, t.iterator());
                out.append(t.size() == 1 ? ",)" : ")");
            }
            case List<?> l -> {
                out.append('[');
                appendItems(out, l.iterator());
                out.append(']');
            }
            case Map<?, ?> m -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        out.append(", ");
                    }
                    first = false;
                    appendRepr(out, e.getKey());
                    out.append(": ");
                    appendRepr(out, e.getValue());
                }
                out.append('}');
            }
            case Collection<?> c -> {
                out.append('[');
                appendItems(out, c.iterator());
                out.append(']');
            }
            case Undefined u -> out.append("Undefined");
            default -> out.append(value);
        }
    }

    private static void appendItems(StringBuilder out, Iterator<?> items) {
        boolean first = true;
        while (items.hasNext()) {
            if (!first) {
                out.append(", ");
            }
            first = false;
            appendRepr(out, items.next());
        }
    }

    /** Python picks single quotes unless the text has a ' and no ". */
    private static void appendStringRepr(StringBuilder out, String s) {
        char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
        out.append(quote);
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            switch (cp) {
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (cp == quote) {
                        out.append('\\').append(quote);
                    } else if (isPrintable(cp)) {
                        out.appendCodePoint(cp);
                    } else if (cp < 0x100) {
                        out.append(String.format("\\x%02x", cp));
                    } else if (cp < 0x10000) {
                        out.append(String.format("\\u%04x", cp));
                    } else {
                        out.append(String.format("\\U%08x", cp));
                    }
                }
            }
        }
        out.append(quote);
    }

    /** Python's str.isprintable: not in categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (space excepted). */
    private static boolean isPrintable(int cp) {
        if (cp == ' ') {
            return true;
        }
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED,
                 Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }

    /** Python's float repr: shortest round-trip digits, fixed notation for 1e-4 <= |x| < 1e16, else d.ddde+XX. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0.0" : "0.0";
        }
        // Java's Double.toString gives the shortest round-trip digits since JDK 19, as Python's repr does.
        BigDecimal exact = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        String digits = exact.unscaledValue().abs().toString();
        int exponent = digits.length() - 1 - exact.scale();
        StringBuilder out = new StringBuilder();
        if (d < 0) {
            out.append('-');
        }
        if (exponent >= -4 && exponent < 16) {
            if (exponent < 0) {
                out.append("0.").append("0".repeat(-exponent - 1)).append(digits);
            } else if (digits.length() <= exponent + 1) {
                out.append(digits).append("0".repeat(exponent + 1 - digits.length())).append(".0");
            } else {
                out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
            }
            return out.toString();
        }
        out.append(digits.charAt(0));
        if (digits.length() > 1) {
            out.append('.').append(digits, 1, digits.length());
        }
        out.append('e').append(exponent < 0 ? '-' : '+');
        int abs = Math.abs(exponent);
        if (abs < 10) {
            out.append('0');
        }
        return out.append(abs).toString();
    }

    /** Python's type name, as Jinja2 puts it in "'dict object' has no attribute 'x'". */
    static String typeName(Object value) {
        return switch (value) {
            case null -> "NoneType";
            case String s -> "str";
            case Markup m -> "Markup";
            case Boolean b -> "bool";
            case Double d -> "float";
            case Float f -> "float";
            case BigDecimal d -> "float";
            case Number n -> "int";
            case PyTuple t -> "tuple";
            case List<?> l -> "list";
            case Map<?, ?> m -> "dict";
            case Namespace n -> "Namespace";
            case Undefined u -> "Undefined";
            case LoopContext l -> "LoopContext";
            default -> value.getClass().getSimpleName();
        };
    }
}
