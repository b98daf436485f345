package io.zse.serve;

import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code zse.kv-cache-memory}: a size ({@code 4GiB}, {@code 512MiB}, {@code 2G}, plain bytes) or a share of the
 * memory free when the model loads ({@code 0.5}, {@code 50%}; container limits count, as the JVM sees them). A share
 * is capped at what every running sequence at full length could use: more would never be touched.
 */
public final class KvMemorySetting {
    private static final Pattern SIZE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([kmgt]i?b?|b)?");
    private static final Pattern SHARE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*%|(0?\\.\\d+|1(?:\\.0+)?)");

    private KvMemorySetting() {
    }

    /**
     * @param maxUseful bytes for every running sequence at full length
     * @throws IllegalArgumentException the value is neither a size nor a share in (0, 1]
     */
    public static long bytes(String value, long maxUseful) {
        return bytes(value, maxUseful, freeMemory());
    }

    static long bytes(String value, long maxUseful, long freeMemory) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Matcher share = SHARE.matcher(v);
        if (share.matches()) {
            double fraction = share.group(1) != null ? Double.parseDouble(share.group(1)) / 100
                    : Double.parseDouble(share.group(2));
            if (fraction <= 0 || fraction > 1) {
                throw invalid(value);
            }
            return Math.max(1, Math.min(maxUseful, (long) (freeMemory * fraction)));
        }
        Matcher size = SIZE.matcher(v);
        if (!size.matches()) {
            throw invalid(value);
        }
        String unit = size.group(2) == null ? "b" : size.group(2);
        int shift = switch (unit.charAt(0)) {
            case 'k' -> 10;
            case 'm' -> 20;
            case 'g' -> 30;
            case 't' -> 40;
            default -> 0;
        };
        double bytes = Double.parseDouble(size.group(1)) * (1L << shift);
        if (bytes < 1 || bytes > Long.MAX_VALUE / 2) {
            throw invalid(value);
        }
        return (long) bytes;
    }

    private static IllegalArgumentException invalid(String value) {
        return new IllegalArgumentException("zse.kv-cache-memory must be a size such as 4GiB or 512MiB, or a share of "
                + "free memory such as 0.5 or 50%, not '" + value + "'");
    }

    private static long freeMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getFreeMemorySize();
        }
        return Runtime.getRuntime().maxMemory();
    }
}
