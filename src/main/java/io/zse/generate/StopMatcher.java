package io.zse.generate;

import java.util.List;

/**
 * Finds stop strings in streamed text without ever emitting part of one: text that could still be the start of a stop
 * string is held back until the next piece decides it.
 */
public final class StopMatcher {
    private final List<String> stops;
    private final StringBuilder pending = new StringBuilder();
    private boolean stopped;

    public StopMatcher(List<String> stops) {
        for (String s : stops) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("a stop string may not be empty");
            }
        }
        this.stops = List.copyOf(stops);
    }

    /** Adds decoded text; returns what may be emitted now (everything before a stop string once one is found). */
    public String append(String text) {
        if (stopped) {
            return "";
        }
        pending.append(text);
        int earliest = -1;
        for (String s : stops) {
            int at = pending.indexOf(s);
            if (at >= 0 && (earliest < 0 || at < earliest)) {
                earliest = at;
            }
        }
        if (earliest >= 0) {
            stopped = true;
            String out = pending.substring(0, earliest);
            pending.setLength(0);
            return out;
        }
        int keep = longestStopPrefixAtEnd();
        String out = pending.substring(0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return out;
    }

    /** True once a stop string has been seen. */
    public boolean stopped() {
        return stopped;
    }

    /** The held-back text, released when generation ends for another reason. */
    public String flush() {
        String out = stopped ? "" : pending.toString();
        pending.setLength(0);
        return out;
    }

    private int longestStopPrefixAtEnd() {
        String text = pending.toString();
        int best = 0;
        for (String s : stops) {
            for (int n = Math.min(s.length() - 1, text.length()); n > best; n--) {
                if (text.regionMatches(text.length() - n, s, 0, n)) {
                    best = n;
                    break;
                }
            }
        }
        return best;
    }
}
