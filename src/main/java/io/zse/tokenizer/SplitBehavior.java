package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;

/** How a pre-tokenizer split treats the matched delimiters (Hugging Face SplitDelimiterBehavior). */
enum SplitBehavior {
    REMOVED, ISOLATED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS;

    static SplitBehavior fromJson(String name) {
        return switch (name) {
            case "Removed" -> REMOVED;
            case "Isolated" -> ISOLATED;
            case "MergedWithPrevious" -> MERGED_WITH_PREVIOUS;
            case "MergedWithNext" -> MERGED_WITH_NEXT;
            case "Contiguous" -> CONTIGUOUS;
            default -> throw new UnsupportedTokenizerException(
                    "unsupported split behavior '" + name + "'");
        };
    }

    /** Splits {@code text} at the matches of {@code pattern}; empty pieces are dropped as Hugging Face does. */
    List<String> split(String text, TextPattern pattern, boolean invert) {
        // Ranges as (start, end, isMatch) triples covering the whole text, like Pattern::find_matches.
        List<int[]> ranges = new ArrayList<>();
        if (text.isEmpty()) {
            return List.of();
        }
        if (pattern.matchesNothing()) {
            ranges.add(new int[]{0, text.length(), 0});
        } else {
            Matcher m = pattern.regex().matcher(text);
            int prev = 0;
            while (m.find()) {
                if (prev != m.start()) {
                    ranges.add(new int[]{prev, m.start(), 0});
                }
                ranges.add(new int[]{m.start(), m.end(), 1});
                prev = m.end();
            }
            if (prev != text.length()) {
                ranges.add(new int[]{prev, text.length(), 0});
            }
        }
        if (invert) {
            for (int[] r : ranges) {
                r[2] ^= 1;
            }
        }
        List<int[]> kept = new ArrayList<>();
        switch (this) {
            case ISOLATED -> kept.addAll(ranges);
            case REMOVED -> ranges.stream().filter(r -> r[2] == 0).forEach(kept::add);
            case CONTIGUOUS -> {
                boolean previousMatch = false;
                for (int[] r : ranges) {
                    boolean isMatch = r[2] == 1;
                    if (isMatch == previousMatch && !kept.isEmpty()) {
                        kept.getLast()[1] = r[1];
                    } else {
                        kept.add(r);
                    }
                    previousMatch = isMatch;
                }
            }
            case MERGED_WITH_PREVIOUS -> {
                boolean previousMatch = false;
                for (int[] r : ranges) {
                    boolean isMatch = r[2] == 1;
                    if (isMatch && !previousMatch && !kept.isEmpty()) {
                        kept.getLast()[1] = r[1];
                    } else {
                        kept.add(r);
                    }
                    previousMatch = isMatch;
                }
            }
            case MERGED_WITH_NEXT -> {
                boolean previousMatch = false;
                for (int i = ranges.size() - 1; i >= 0; i--) {
                    int[] r = ranges.get(i);
                    boolean isMatch = r[2] == 1;
                    if (isMatch && !previousMatch && !kept.isEmpty()) {
                        kept.getLast()[0] = r[0];
                    } else {
                        kept.add(r);
                    }
                    previousMatch = isMatch;
                }
                java.util.Collections.reverse(kept);
            }
        }
        List<String> pieces = new ArrayList<>(kept.size());
        for (int[] r : kept) {
            if (r[1] > r[0]) {
                pieces.add(text.substring(r[0], r[1]));
            }
        }
        return pieces;
    }
}
