package io.zse.generate.grammar;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a partial output stands in a grammar: every parse that the bytes so far allow (a choice between rules that
 * start alike keeps several). Immutable; {@link #advance} gives the state after one more byte, or null when the byte
 * cannot follow. Two states that compare equal allow exactly the same continuations.
 */
public final class GrammarState {
    // JSON string phases
    private static final int STRING_OPEN = 0, STRING_IN = 1, STRING_ESCAPE = 2, STRING_HEX = 3, STRING_UTF8 = 4;
    // JSON number phases
    private static final int NUM_START = 0, NUM_MINUS = 1, NUM_ZERO = 2, NUM_INT = 3, NUM_DOT = 4, NUM_FRAC = 5,
            NUM_EXP = 6, NUM_EXP_SIGN = 7, NUM_EXP_DIGITS = 8;
    /** Digit runs are bounded so a number always ends (and fits a double without loss of meaning). */
    private static final int MAX_INT_DIGITS = 15, MAX_FRACTION_DIGITS = 15, MAX_EXPONENT_DIGITS = 2;
    private static final int MAX_DEPTH = 4096;
    private static final int MAX_INTERNED = 200_000;

    /** Marks a refused byte in {@link #transitions}. */
    private static final GrammarState REFUSED = new GrammarState(new ParseStack[0], null);

    private final ParseStack[] stacks; // each with a byte-consuming frame on top, or DONE
    private final int hash;
    private final Map<GrammarState, GrammarState> interned; // shared by every state reached from one start
    /**
     * The state after each byte, filled as bytes are tried. With interning, a scan of 150K tokens mostly follows
     * these links instead of parsing: tokens share states far more than they share prefixes.
     */
    private volatile GrammarState[] transitions;
    private int minBytes = -1;

    private GrammarState(ParseStack[] stacks, Map<GrammarState, GrammarState> interned) {
        this.stacks = stacks;
        this.interned = interned;
        int h = 0;
        for (ParseStack s : stacks) {
            h += s.hashCode(); // order-free: the same set of parses is the same state
        }
        this.hash = h;
    }

    /** The state before any output. */
    public static GrammarState start(GrammarNode root) {
        List<ParseStack> out = new ArrayList<>(2);
        expand(ParseStack.push(begin(root), ParseStack.DONE), out, 0);
        out.removeIf(stack -> !canFinish(stack));
        if (out.isEmpty()) {
            throw new IllegalArgumentException("the grammar opens more than " + MAX_DEPTH
                    + " rules before its first byte");
        }
        GrammarState start = new GrammarState(out.toArray(ParseStack[]::new), new ConcurrentHashMap<>());
        start.interned.put(start, start);
        return start;
    }

    /** The state after {@code b}, or null when no parse accepts it. */
    public GrammarState advance(int b) {
        int index = b & 0xFF;
        GrammarState[] known = transitions;
        if (known != null && known[index] != null) {
            return known[index] == REFUSED ? null : known[index];
        }
        GrammarState next = parse(index);
        if (known == null) {
            transitions = known = new GrammarState[256];
        }
        known[index] = next == null ? REFUSED : next;
        return next;
    }

    private GrammarState parse(int b) {
        List<ParseStack> out = new ArrayList<>(2);
        for (ParseStack s : stacks) {
            ParseStack next = consume(s, b);
            if (next == s && stacks.length == 1) {
                return this; // a byte inside a string: most of a string's bytes change nothing
            }
            if (next != null) {
                expand(next, out, 0);
            }
        }
        out.removeIf(stack -> !canFinish(stack));
        if (out.isEmpty()) {
            return null;
        }
        GrammarState state = new GrammarState(out.toArray(ParseStack[]::new), interned);
        if (interned.size() > MAX_INTERNED) {
            interned.clear(); // a long generation: forget old states rather than grow without bound
        }
        GrammarState known = interned.putIfAbsent(state, state);
        return known == null ? state : known;
    }

    /** The state after all of {@code bytes}, or null. */
    public GrammarState advance(byte[] bytes) {
        GrammarState s = this;
        for (int i = 0; i < bytes.length && s != null; i++) {
            s = s.advance(bytes[i]);
        }
        return s;
    }

    /** The output so far is a complete value (it may still go on, as a number may). */
    public boolean accepts() {
        for (ParseStack s : stacks) {
            if (s.isDone()) {
                return true;
            }
        }
        return false;
    }

    /** Complete, and nothing may follow. */
    public boolean complete() {
        return stacks.length == 1 && stacks[0].isDone();
    }

    /** The fewest bytes that complete the output from here. */
    public int minBytesToFinish() {
        if (minBytes < 0) {
            minBytes = computeMinBytes();
        }
        return minBytes;
    }

    private int computeMinBytes() {
        int min = Integer.MAX_VALUE;
        for (ParseStack s : stacks) {
            long sum = 0;
            for (ParseStack f = s; !f.isDone(); f = f.rest) {
                sum += remaining(f.top);
            }
            min = (int) Math.min(min, sum);
        }
        return min;
    }

    private static Frame begin(GrammarNode node) {
        return new Frame(node, 0, 0);
    }

    /** Opens rules until each parse has a byte-consuming frame on top (or is done); drops duplicates. */
    private static void expand(ParseStack stack, List<ParseStack> out, int depth) {
        if (depth > MAX_DEPTH || stack.depth > MAX_DEPTH) {
            return; // this parse nests too deep: dropped, so the byte that would open it is refused like any other
        }
        if (stack.isDone()) {
            add(stack, out);
            return;
        }
        Frame f = stack.top;
        switch (f.node) {
            case GrammarNode.Literal l -> {
                if (f.position == l.bytes.length) {
                    expand(stack.rest, out, depth + 1);
                } else {
                    add(stack, out);
                }
            }
            case GrammarNode.Sequence s -> {
                if (f.position == s.parts.length) {
                    expand(stack.rest, out, depth + 1);
                } else {
                    // the last part replaces the sequence's frame, so recursion through tails does not deepen stacks
                    ParseStack after = f.position + 1 == s.parts.length ? stack.rest
                            : ParseStack.push(new Frame(s, 0, f.position + 1), stack.rest);
                    expand(ParseStack.push(begin(s.parts[f.position]), after), out, depth + 1);
                }
            }
            case GrammarNode.Choice c -> {
                for (GrammarNode option : c.options) {
                    expand(ParseStack.push(begin(option), stack.rest), out, depth + 1);
                }
            }
            case GrammarNode.Reference r -> expand(ParseStack.push(begin(r.target), stack.rest), out, depth + 1);
            case GrammarNode.Repeat r -> {
                expand(stack.rest, out, depth + 1);
                expand(ParseStack.push(begin(r.item), stack), out, depth + 1);
            }
            case GrammarNode.JsonString s -> add(stack, out);
            case GrammarNode.JsonNumber n -> {
                add(stack, out);
                if (numberMayEnd(f.phase)) {
                    expand(stack.rest, out, depth + 1);
                }
            }
        }
    }

    /**
     * Whether the parse can be completed within {@link #MAX_DEPTH} frames: a byte that opens a rule whose completion
     * must nest past it is refused with that rule, rather than accepted into a parse that could never end.
     */
    private static boolean canFinish(ParseStack stack) {
        for (ParseStack s = stack; !s.isDone(); s = s.rest) {
            Frame f = s.top;
            int frames = f.node instanceof GrammarNode.Sequence q ? q.nestingFrom(f.position) : 1;
            if ((long) s.depth - 1 + frames > MAX_DEPTH) {
                return false;
            }
        }
        return true;
    }

    private static void add(ParseStack stack, List<ParseStack> out) {
        if (!out.contains(stack)) {
            out.add(stack);
        }
    }

    /** One byte against the top frame: the stack after it (before expansion), or null. */
    private static ParseStack consume(ParseStack stack, int b) {
        if (stack.isDone()) {
            return null;
        }
        Frame f = stack.top;
        return switch (f.node) {
            case GrammarNode.Literal l -> (l.bytes[f.position] & 0xFF) == b
                    ? ParseStack.push(new Frame(l, 0, f.position + 1), stack.rest) : null;
            case GrammarNode.JsonString s -> string(stack, f, b);
            case GrammarNode.JsonNumber n -> number(stack, f, n.integer, b);
            default -> throw new IllegalStateException("unexpanded rule on top of a parse");
        };
    }

    private static ParseStack string(ParseStack stack, Frame f, int b) {
        GrammarNode node = f.node;
        return switch (f.phase) {
            case STRING_OPEN -> b == '"' ? with(stack, node, STRING_IN, 0) : null;
            case STRING_IN -> {
                if (b == '"') {
                    yield stack.rest;
                } else if (b == '\\') {
                    yield with(stack, node, STRING_ESCAPE, 0);
                } else if (b >= 0x20 && b < 0x80) {
                    yield stack;
                } else {
                    int lead = utf8Lead(b);
                    yield lead < 0 ? null : with(stack, node, STRING_UTF8, lead);
                }
            }
            case STRING_ESCAPE -> {
                if ("\"\\/bfnrt".indexOf(b) >= 0) {
                    yield with(stack, node, STRING_IN, 0);
                }
                yield b == 'u' ? with(stack, node, STRING_HEX, 4) : null;
            }
            case STRING_HEX -> Character.digit(b, 16) < 0 ? null
                    : f.position == 1 ? with(stack, node, STRING_IN, 0) : with(stack, node, STRING_HEX, f.position - 1);
            case STRING_UTF8 -> {
                int due = f.position >>> 16;
                int lo = (f.position >>> 8) & 0xFF;
                int hi = f.position & 0xFF;
                if (b < lo || b > hi) {
                    yield null;
                }
                yield due == 1 ? with(stack, node, STRING_IN, 0)
                        : with(stack, node, STRING_UTF8, (due - 1) << 16 | 0x80 << 8 | 0xBF);
            }
            default -> null;
        };
    }

    /** For a UTF-8 lead byte: continuation bytes due, and the range the next one must fall in (no overlongs, no surrogates). */
    private static int utf8Lead(int b) {
        if (b >= 0xC2 && b <= 0xDF) {
            return 1 << 16 | 0x80 << 8 | 0xBF;
        } else if (b == 0xE0) {
            return 2 << 16 | 0xA0 << 8 | 0xBF;
        } else if (b == 0xED) {
            return 2 << 16 | 0x80 << 8 | 0x9F;
        } else if (b >= 0xE1 && b <= 0xEF) {
            return 2 << 16 | 0x80 << 8 | 0xBF;
        } else if (b == 0xF0) {
            return 3 << 16 | 0x90 << 8 | 0xBF;
        } else if (b >= 0xF1 && b <= 0xF3) {
            return 3 << 16 | 0x80 << 8 | 0xBF;
        } else if (b == 0xF4) {
            return 3 << 16 | 0x80 << 8 | 0x8F;
        }
        return -1;
    }

    private static ParseStack number(ParseStack stack, Frame f, boolean integer, int b) {
        GrammarNode node = f.node;
        boolean digit = b >= '0' && b <= '9';
        boolean fractionAllowed = !integer;
        return switch (f.phase) {
            case NUM_START -> b == '-' ? with(stack, node, NUM_MINUS, 0) : firstDigit(stack, node, b);
            case NUM_MINUS -> firstDigit(stack, node, b);
            case NUM_ZERO, NUM_INT -> {
                if (digit && f.phase == NUM_INT && f.position < MAX_INT_DIGITS) {
                    yield with(stack, node, NUM_INT, f.position + 1);
                } else if (b == '.' && fractionAllowed) {
                    yield with(stack, node, NUM_DOT, 0);
                } else if ((b == 'e' || b == 'E') && fractionAllowed) {
                    yield with(stack, node, NUM_EXP, 0);
                }
                yield null;
            }
            case NUM_DOT -> digit ? with(stack, node, NUM_FRAC, 1) : null;
            case NUM_FRAC -> {
                if (digit && f.position < MAX_FRACTION_DIGITS) {
                    yield with(stack, node, NUM_FRAC, f.position + 1);
                }
                yield b == 'e' || b == 'E' ? with(stack, node, NUM_EXP, 0) : null;
            }
            case NUM_EXP -> b == '+' || b == '-' ? with(stack, node, NUM_EXP_SIGN, 0)
                    : digit ? with(stack, node, NUM_EXP_DIGITS, 1) : null;
            case NUM_EXP_SIGN -> digit ? with(stack, node, NUM_EXP_DIGITS, 1) : null;
            case NUM_EXP_DIGITS -> digit && f.position < MAX_EXPONENT_DIGITS
                    ? with(stack, node, NUM_EXP_DIGITS, f.position + 1) : null;
            default -> null;
        };
    }

    private static ParseStack firstDigit(ParseStack stack, GrammarNode node, int b) {
        if (b == '0') {
            return with(stack, node, NUM_ZERO, 0);
        }
        return b >= '1' && b <= '9' ? with(stack, node, NUM_INT, 1) : null;
    }

    private static boolean numberMayEnd(int phase) {
        return phase == NUM_ZERO || phase == NUM_INT || phase == NUM_FRAC || phase == NUM_EXP_DIGITS;
    }

    private static ParseStack with(ParseStack stack, GrammarNode node, int phase, int position) {
        return ParseStack.push(new Frame(node, phase, position), stack.rest);
    }

    /** The fewest bytes that complete one frame. */
    private static long remaining(Frame f) {
        return switch (f.node) {
            case GrammarNode.Literal l -> l.bytes.length - f.position;
            case GrammarNode.Sequence s -> {
                long sum = 0;
                for (int i = f.position; i < s.parts.length; i++) {
                    sum += s.parts[i].minLength;
                }
                yield sum;
            }
            case GrammarNode.Repeat r -> 0;
            case GrammarNode.JsonString s -> switch (f.phase) {
                case STRING_OPEN, STRING_ESCAPE -> 2;
                case STRING_HEX -> f.position + 1;
                case STRING_UTF8 -> (f.position >>> 16) + 1;
                default -> 1;
            };
            case GrammarNode.JsonNumber n -> numberMayEnd(f.phase) ? 0 : 1;
            default -> f.node.minLength;
        };
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof GrammarState other) || other.hash != hash || other.stacks.length != stacks.length) {
            return false;
        }
        return stacks.length == 1 ? stacks[0].equals(other.stacks[0])
                : Arrays.asList(stacks).containsAll(Arrays.asList(other.stacks));
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
