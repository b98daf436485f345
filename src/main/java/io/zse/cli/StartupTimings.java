package io.zse.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The milestones of one command's start, in milliseconds since the process started (so the JVM's own start counts):
 * what a scale-to-zero platform's user waits for, phase by phase.
 */
final class StartupTimings {
    private final boolean on;       // off: every call does nothing (zse generate without --timings)
    private final long startNanos;  // System.nanoTime() at the process start
    private final List<Mark> marks = new ArrayList<>();
    private long firstTokenNanos;
    private long lastTokenNanos;
    private int tokens;

    StartupTimings(boolean on) {
        this.on = on;
        startNanos = on ? System.nanoTime() - processAgeMillis() * 1_000_000L : 0;
    }

    /**
     * How long ago this process started, from /proc to the kernel's 10 ms tick: its start in ticks since boot against
     * the uptime now (ProcessHandle's start instant adds the boot time, which Linux gives in whole seconds). 0 where
     * /proc cannot tell: the milestones then count from the command's start.
     */
    static long processAgeMillis() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // the fields after the command name (which may hold spaces), from the third: starttime is the 22nd
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long startTicks = Long.parseLong(fields[22 - 3]);
            double uptimeSeconds = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
            return Math.max(0, Math.round(uptimeSeconds * 1000 - startTicks * 10.0)); // USER_HZ is 100 on Linux
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** A milestone and its System.nanoTime(). */
    private record Mark(String what, long nanos) {
    }

    /** Records that {@code what} is done now. */
    void mark(String what) {
        markAt(what, System.nanoTime());
    }

    /** Records that {@code what} was done at {@code nanoTime} (System.nanoTime()), which another thread noted. */
    void markAt(String what, long nanoTime) {
        if (on) {
            marks.add(new Mark(what, nanoTime));
        }
    }

    /** Called with each piece of text streamed: the first is the first token a streaming client would see. */
    void text() {
        if (on && firstTokenNanos == 0) {
            firstTokenNanos = System.nanoTime();
            mark("first token");
        }
    }

    /** Called when generation ends, with the number of tokens generated: times the decode after the first. */
    void finished(int generated) {
        if (!on) {
            return;
        }
        lastTokenNanos = System.nanoTime();
        tokens = generated;
    }

    /** One line: each milestone's time since process start, in time order; then the decode rate after token one. */
    void print(PrintWriter err) {
        if (!on) {
            return;
        }
        List<String> inOrder = marks.stream().sorted(java.util.Comparator.comparingLong(Mark::nanos))
                .map(m -> m.what() + " " + (m.nanos() - startNanos) / 1_000_000L + " ms").toList();
        StringBuilder line = new StringBuilder("timings since process start: ").append(String.join(", ", inOrder));
        if (tokens > 1 && firstTokenNanos != 0) {
            double seconds = (lastTokenNanos - firstTokenNanos) / 1e9;
            line.append(String.format("; then %d tokens at %.1f tok/s", tokens - 1, (tokens - 1) / seconds));
        }
        err.println(line);
        err.flush();
    }
}
