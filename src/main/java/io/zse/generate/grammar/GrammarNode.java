package io.zse.generate.grammar;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One rule of a byte grammar: what text may be written here. Nodes compare by identity (a grammar may be cyclic
 * through {@link Reference}), so parse states holding them stay cheap to compare and hash.
 */
public abstract sealed class GrammarNode {
    /** The fewest bytes that complete this rule (filled in by {@link #computeMinLengths}). */
    int minLength = Integer.MAX_VALUE;
    /**
     * The fewest parse frames that completing this rule stacks at once, its own included (filled in by
     * {@link #computeMinLengths}): how deep a parse must be allowed to go to finish it.
     */
    int minNesting = Integer.MAX_VALUE;

    private GrammarNode() {
    }

    /** Exactly these bytes. */
    public static final class Literal extends GrammarNode {
        final byte[] bytes;

        Literal(byte[] bytes) {
            this.bytes = bytes;
        }
    }

    /** Each part in turn. */
    public static final class Sequence extends GrammarNode {
        final GrammarNode[] parts;
        /** [position]: {@link #nestingOfParts} from each position on (filled in by {@link #computeMinLengths}). */
        int[] nestingFrom;

        Sequence(GrammarNode[] parts) {
            this.parts = parts;
        }

        /** The most frames that completing the parts from {@code position} on stacks at once, its own included. */
        int nestingFrom(int position) {
            return nestingFrom != null ? nestingFrom[position] : nestingOfParts(this, position);
        }
    }

    /** Any one of the options. */
    public static final class Choice extends GrammarNode {
        final GrammarNode[] options;

        Choice(GrammarNode[] options) {
            this.options = options;
        }
    }

    /** The item zero or more times. */
    public static final class Repeat extends GrammarNode {
        final GrammarNode item;

        Repeat(GrammarNode item) {
            this.item = item;
        }
    }

    /** Any JSON string literal, quotes included (valid UTF-8, escapes checked). */
    public static final class JsonString extends GrammarNode {
    }

    /** A JSON number; an integer has neither fraction nor exponent. Digit runs are bounded so output always ends. */
    public static final class JsonNumber extends GrammarNode {
        final boolean integer;

        JsonNumber(boolean integer) {
            this.integer = integer;
        }
    }

    /** Another rule, bound later (a schema's {@code $ref}, possibly recursive). */
    public static final class Reference extends GrammarNode {
        final String name;
        GrammarNode target;

        Reference(String name) {
            this.name = name;
        }

        void bind(GrammarNode node) {
            this.target = node;
        }
    }

    public static Literal literal(String text) {
        return new Literal(text.getBytes(StandardCharsets.UTF_8));
    }

    public static GrammarNode sequence(GrammarNode... parts) {
        return parts.length == 1 ? parts[0] : new Sequence(parts);
    }

    public static GrammarNode choice(List<GrammarNode> options) {
        return options.size() == 1 ? options.getFirst() : new Choice(options.toArray(GrammarNode[]::new));
    }

    public static GrammarNode repeat(GrammarNode item) {
        return new Repeat(item);
    }

    public static GrammarNode string() {
        return new JsonString();
    }

    public static GrammarNode number(boolean integer) {
        return new JsonNumber(integer);
    }

    /** One or more items with a separator between them. */
    public static GrammarNode separated(GrammarNode item, GrammarNode separator) {
        return sequence(item, repeat(sequence(separator, item)));
    }

    /**
     * Fills every reachable node's {@link #minLength} and {@link #minNesting} (a fixed point, since references may be
     * cyclic).
     *
     * @throws IllegalArgumentException a rule can never be completed (its recursion has no way out)
     */
    static void computeMinLengths(GrammarNode root) {
        List<GrammarNode> nodes = new ArrayList<>();
        collect(root, new IdentityHashMap<>(), nodes);
        boolean changed = true;
        while (changed) {
            changed = false;
            for (GrammarNode n : nodes) {
                int m = n.ownMinLength();
                int nesting = n.ownMinNesting();
                if (m < n.minLength || nesting < n.minNesting) {
                    n.minLength = Math.min(m, n.minLength);
                    n.minNesting = Math.min(nesting, n.minNesting);
                    changed = true;
                }
            }
        }
        if (root.minLength == Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the schema has no finite value (a recursion with no way out)");
        }
        for (GrammarNode n : nodes) {
            if (n instanceof Sequence s) { // looked up for every parse a byte leaves (GrammarState.canFinish)
                s.nestingFrom = new int[s.parts.length + 1];
                for (int i = 0; i <= s.parts.length; i++) {
                    s.nestingFrom[i] = nestingOfParts(s, i);
                }
            }
        }
    }

    private static void collect(GrammarNode n, Map<GrammarNode, Boolean> seen, List<GrammarNode> out) {
        if (n == null || seen.put(n, Boolean.TRUE) != null) {
            return;
        }
        out.add(n);
        switch (n) {
            case Sequence s -> {
                for (GrammarNode p : s.parts) {
                    collect(p, seen, out);
                }
            }
            case Choice c -> {
                for (GrammarNode o : c.options) {
                    collect(o, seen, out);
                }
            }
            case Repeat r -> collect(r.item, seen, out);
            case Reference r -> collect(r.target, seen, out);
            default -> {
            }
        }
    }

    private int ownMinNesting() {
        return switch (this) {
            case Sequence s -> nestingOfParts(s, 0);
            case Choice c -> {
                int min = Integer.MAX_VALUE;
                for (GrammarNode o : c.options) {
                    min = Math.min(min, o.minNesting); // the option takes the choice's frame
                }
                yield min;
            }
            case Reference r -> r.target == null ? Integer.MAX_VALUE : r.target.minNesting; // the target takes its frame
            default -> 1; // a terminal, or a repeat (which may stop at once)
        };
    }

    /**
     * The most frames that completing parts[from..] of a sequence stacks at once, the sequence's own included: each
     * part sits above the sequence's frame, except the last, which takes that frame's place.
     */
    private static int nestingOfParts(Sequence s, int from) {
        long most = 1;
        for (int i = from; i < s.parts.length; i++) {
            long part = s.parts[i].minNesting;
            most = Math.max(most, i == s.parts.length - 1 ? part : part + 1);
        }
        return (int) Math.min(most, Integer.MAX_VALUE);
    }

    private int ownMinLength() {
        return switch (this) {
            case Literal l -> l.bytes.length;
            case Sequence s -> {
                long sum = 0;
                for (GrammarNode p : s.parts) {
                    sum += p.minLength;
                }
                yield (int) Math.min(sum, Integer.MAX_VALUE);
            }
            case Choice c -> {
                int min = Integer.MAX_VALUE;
                for (GrammarNode o : c.options) {
                    min = Math.min(min, o.minLength);
                }
                yield min;
            }
            case Repeat r -> 0;
            case JsonString s -> 2;
            case JsonNumber n -> 1;
            case Reference r -> r.target == null ? Integer.MAX_VALUE : r.target.minLength;
        };
    }
}
