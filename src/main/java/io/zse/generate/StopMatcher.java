package io.zse.generate;

import java.util.List;
import java.util.Set;

/**
 * Finds stop strings in streamed text without ever emitting part of one: text that could still be the start of a stop
 * string is held back until the next piece decides it.
 */
public final class StopMatcher {
    private final List<String> stops;
    private final Set<String> kept; // stop strings that stay in the output once matched
    private final StringBuilder pending = new StringBuilder();
    private boolean stopped;

    public StopMatcher(List<String> stops) {
        this(stops, Set.of());
    }

    /** @param kept those of {@code stops} whose match is emitted too (vLLM's include_stop_str_in_output) */
    public StopMatcher(List<String> stops, Set<String> kept) {
        for (String s : stops) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("a stop string may not be empty");
            }
        }
        this.stops = List.copyOf(stops);
        this.kept = Set.copyOf(kept);
    }

    /** Adds decoded text; returns what may be emitted now (everything before a stop string once one is found). */
    public String append(String text) {
        if (stopped) {
            return "";
        }
        pending.append(text);
        int earliest = -1;
        int end = -1;
        for (String s : stops) {
            int at = pending.indexOf(s);
            if (at >= 0 && (earliest < 0 || at < earliest)) {
                earliest = at;
                end = kept.contains(s) ? at + s.length() : at;
            }
        }
        if (earliest >= 0) {
            stopped = true;
            String out = pending.substring(0, end);
            pending.setLength(0);
            return out;
        }
        int keep = longestStopPrefixAtEnd();
        String out = pending.substring(0, pending.length() - keep);
        pending.delete(0, pending.length() - keep);
        return out;
    }

    /** Adds text that is not searched (vLLM's min_tokens): it and whatever was held back are emitted now. */
    public String pass(String text) {
        if (stopped) {
            return "";
        }
        String out = pending + text;
        pending.setLength(0);
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
