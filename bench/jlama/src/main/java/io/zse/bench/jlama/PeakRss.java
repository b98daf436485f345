package io.zse.bench.jlama;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Peak resident set of this process so far: VmHWM of /proc/self/status, as zse bench reports it. */
final class PeakRss {
    private PeakRss() {
    }

    /** In MiB with one decimal, or "n/a" off Linux. */
    static String mebibytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return String.format("%.1f", Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Not Linux: no peak to report.
        }
        return "n/a";
    }
}
