package io.zse.tokenizer.template;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Python {@code str} semantics the templates rely on: code-point indexing, whitespace as {@code str.isspace}, strip/split/title. */
final class PyStrings {
    private PyStrings() {
    }

    /** Python's {@code str.isspace} for one code point (Java's isWhitespace misses NBSP and friends). */
    static boolean isSpace(int cp) {
        return switch (cp) {
            case ' ', '\t', '\n', 0x0b, '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f,
                 0x205f, 0x3000 -> true;
            default -> cp >= 0x2000 && cp <= 0x200a;
        };
    }

    static int length(String s) {
        return s.codePointCount(0, s.length());
    }

    static int[] codePoints(String s) {
        return s.codePoints().toArray();
    }

    static String strip(String s, String chars, boolean left, boolean right) {
        int start = 0;
        int end = s.length();
        while (left && start < end) {
            int cp = s.codePointAt(start);
            if (!stripped(cp, chars)) {
                break;
            }
            start += Character.charCount(cp);
        }
        while (right && end > start) {
            int cp = s.codePointBefore(end);
            if (!stripped(cp, chars)) {
                break;
            }
            end -= Character.charCount(cp);
        }
        return s.substring(start, end);
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isSpace(cp) : chars.indexOf(cp) >= 0;
    }

    /** {@code str.split(sep, maxsplit)}; {@code sep == null} splits on whitespace runs and drops empty ends. */
    static List<Object> split(String s, String sep, int maxsplit) {
        List<Object> parts = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            while (true) {
                while (i < n && isSpace(s.codePointAt(i))) {
                    i += Character.charCount(s.codePointAt(i));
                }
                if (i >= n) {
                    return parts;
                }
                if (maxsplit >= 0 && parts.size() == maxsplit) {
                    parts.add(s.substring(i)); // Python keeps the remainder's trailing whitespace
                    return parts;
                }
                int j = i;
                while (j < n && !isSpace(s.codePointAt(j))) {
                    j += Character.charCount(s.codePointAt(j));
                }
                parts.add(s.substring(i, j));
                i = j;
            }
        }
        if (sep.isEmpty()) {
            throw new ChatTemplateException("empty separator");
        }
        int from = 0;
        while (maxsplit < 0 || parts.size() < maxsplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) {
                break;
            }
            parts.add(s.substring(from, at));
            from = at + sep.length();
        }
        parts.add(s.substring(from));
        return parts;
    }

    static List<Object> rsplit(String s, String sep, int maxsplit) {
        if (maxsplit < 0) {
            return split(s, sep, -1);
        }
        List<Object> parts = new ArrayList<>();
        if (sep == null) {
            int end = s.length();
            while (true) {
                while (end > 0 && isSpace(s.codePointBefore(end))) {
                    end -= Character.charCount(s.codePointBefore(end));
                }
                if (end == 0) {
                    break;
                }
                if (parts.size() == maxsplit) {
                    parts.add(s.substring(0, end));
                    break;
                }
                int start = end;
                while (start > 0 && !isSpace(s.codePointBefore(start))) {
                    start -= Character.charCount(s.codePointBefore(start));
                }
                parts.add(s.substring(start, end));
                end = start;
            }
        } else {
            if (sep.isEmpty()) {
                throw new ChatTemplateException("empty separator");
            }
            int end = s.length();
            while (parts.size() < maxsplit) {
                int at = s.lastIndexOf(sep, end - sep.length());
                if (at < 0) {
                    break;
                }
                parts.add(s.substring(at + sep.length(), end));
                end = at;
            }
            parts.add(s.substring(0, end));
        }
        java.util.Collections.reverse(parts);
        return parts;
    }

    static String upper(String s) {
        return s.toUpperCase(Locale.ROOT);
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    private static boolean isCased(int cp) {
        return Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
    }

    /** Python's {@code str.title}: a cased character after a cased one is lowered, any other is title-cased. */
    static String title(String s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            out.appendCodePoint(previousCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            previousCased = isCased(cp);
        }
        return out.toString();
    }

    /** Python's {@code str.capitalize}: first character title-cased, the rest lowered. */
    static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        int first = s.codePointAt(0);
        return new StringBuilder().appendCodePoint(Character.toTitleCase(first))
                .append(lower(s.substring(Character.charCount(first)))).toString();
    }

    static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return length(s) + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    /** {@code str.find} as a code-point index. */
    static int find(String s, String sub, boolean fromRight) {
        int at = fromRight ? s.lastIndexOf(sub) : s.indexOf(sub);
        return at < 0 ? -1 : s.codePointCount(0, at);
    }

    static String replace(String s, String old, String replacement, int maxCount) {
        if (maxCount < 0) {
            if (old.isEmpty()) {
                return replaceEmpty(s, replacement, Integer.MAX_VALUE);
            }
            return s.replace(old, replacement);
        }
        if (old.isEmpty()) {
            return replaceEmpty(s, replacement, maxCount);
        }
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int n = 0; n < maxCount; n++) {
            int at = s.indexOf(old, from);
            if (at < 0) {
                break;
            }
            out.append(s, from, at).append(replacement);
            from = at + old.length();
        }
        return out.append(s, from, s.length()).toString();
    }

    // Python inserts the replacement before every code point and at the end when the pattern is "".
    private static String replaceEmpty(String s, String replacement, int maxCount) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        int i = 0;
        while (i < s.length()) {
            if (n < maxCount) {
                out.append(replacement);
                n++;
            }
            int cp = s.codePointAt(i);
            out.appendCodePoint(cp);
            i += Character.charCount(cp);
        }
        if (n < maxCount) {
            out.append(replacement);
        }
        return out.toString();
    }
}
