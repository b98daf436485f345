package io.zse.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The milestones of one command's start, in milliseconds since the process started (the OS's start time, so the
 * JVM's own start counts): what a scale-to-zero platform's user waits for, phase by phase.
 */
final class StartupTimings {
    private final Instant processStart;
    private final List<String> marks = new ArrayList<>();
    private long firstTokenNanos;
    private long lastTokenNanos;
    private int tokens;

    StartupTimings() {
        // ProcessHandle gives the start with the OS's tick (10 ms on Linux); without one, the command's own start
        processStart = ProcessHandle.current().info().startInstant().orElseGet(Instant::now);
    }

    /** Records that {@code what} is done now. */
    void mark(String what) {
        marks.add(what + " " + sinceStart() + " ms");
    }

    /** Called with each piece of text streamed: the first is the first token a streaming client would see. */
    void text() {
        if (firstTokenNanos == 0) {
            firstTokenNanos = System.nanoTime();
            mark("first token");
        }
    }

    /** Called when generation ends, with the number of tokens generated: times the decode after the first. */
    void finished(int generated) {
        lastTokenNanos = System.nanoTime();
        tokens = generated;
    }

    private long sinceStart() {
        return Duration.between(processStart, Instant.now()).toMillis();
    }

    /** One line: each milestone's time since process start, then the decode rate after the first token. */
    void print(PrintWriter err) {
        StringBuilder line = new StringBuilder("timings since process start: ").append(String.join(", ", marks));
        if (tokens > 1 && firstTokenNanos != 0) {
            double seconds = (lastTokenNanos - firstTokenNanos) / 1e9;
            line.append(String.format("; then %d tokens at %.1f tok/s", tokens - 1, (tokens - 1) / seconds));
        }
        err.println(line);
        err.flush();
    }
}
