package io.zse.api;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

/** Counts the live instances of a class in this JVM, after a full GC, as {@code jcmd GC.class_histogram} does. */
final class LiveHeap {
    private LiveHeap() {
    }

    static long instances(String className) throws Exception {
        String histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        long count = 0;
        // rows: "  12:     345     6789  io.zse.api.SseStream" (a class loaded by several loaders has a row each)
        for (String line : histogram.split("\n")) {
            String[] cells = line.trim().split("\\s+");
            if (cells.length >= 4 && cells[0].endsWith(":") && cells[3].equals(className)) {
                count += Long.parseLong(cells[1]);
            }
        }
        return count;
    }
}
