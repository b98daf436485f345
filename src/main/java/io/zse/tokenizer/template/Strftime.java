package io.zse.tokenizer.template;

import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.TextStyle;
import java.util.Locale;

/** Python's {@code datetime.strftime} for the directives chat templates use (e.g. "%d %b %Y" for Llama 3.1's date). */
final class Strftime {
    private Strftime() {
    }

    static String format(String pattern, LocalDateTime t) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < pattern.length(); i++) {
            char c = pattern.charAt(i);
            if (c != '%' || i + 1 >= pattern.length()) {
                out.append(c);
                continue;
            }
            char d = pattern.charAt(++i);
            boolean noPad = d == '-' && i + 1 < pattern.length(); // glibc's %-d, %-m ...
            if (noPad) {
                d = pattern.charAt(++i);
            }
            String field = switch (d) {
                case 'Y' -> String.valueOf(t.getYear());
                case 'y' -> two(t.getYear() % 100);
                case 'm' -> two(t.getMonthValue());
                case 'd' -> two(t.getDayOfMonth());
                case 'e' -> String.format("%2d", t.getDayOfMonth());
                case 'H' -> two(t.getHour());
                case 'I' -> two(t.getHour() % 12 == 0 ? 12 : t.getHour() % 12);
                case 'M' -> two(t.getMinute());
                case 'S' -> two(t.getSecond());
                case 'f' -> String.format("%06d", t.getNano() / 1000);
                case 'p' -> t.getHour() < 12 ? "AM" : "PM";
                case 'B' -> t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
                case 'b', 'h' -> t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
                case 'A' -> t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
                case 'a' -> t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
                case 'j' -> String.format("%03d", t.getDayOfYear());
                case 'w' -> String.valueOf(t.getDayOfWeek().getValue() % 7);
                case 'u' -> String.valueOf(t.getDayOfWeek().getValue());
                case 'F' -> t.format(DateTimeFormatter.ISO_LOCAL_DATE);
                case 'T' -> t.format(DateTimeFormatter.ofPattern("HH:mm:ss"));
                case 'D' -> t.format(DateTimeFormatter.ofPattern("MM/dd/yy"));
                case 'Z', 'z' -> "";
                case '%' -> "%";
                default -> "%" + d;
            };
            if (noPad && field.length() > 1 && (field.charAt(0) == '0' || field.charAt(0) == ' ')) {
                field = field.substring(1);
            }
            out.append(field);
        }
        return out.toString();
    }

    private static String two(int v) {
        return v < 10 ? "0" + v : String.valueOf(v);
    }
}
