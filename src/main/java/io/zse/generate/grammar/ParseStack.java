package io.zse.generate.grammar;

/**
 * An immutable stack of {@link Frame}s: the rule being written on top, the rules waiting for it below. Shared tails
 * make pushing and popping cheap; {@link #DONE} (no frames) means the whole grammar is complete.
 */
final class ParseStack {
    static final ParseStack DONE = new ParseStack(null, null);

    final Frame top;
    final ParseStack rest;
    final int depth;
    private final int hash;

    private ParseStack(Frame top, ParseStack rest) {
        this.top = top;
        this.rest = rest;
        this.depth = rest == null ? 0 : rest.depth + 1;
        this.hash = top == null ? 0 : top.hashCode() * 31 + rest.hash;
    }

    static ParseStack push(Frame top, ParseStack rest) {
        return new ParseStack(top, rest);
    }

    boolean isDone() {
        return top == null;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ParseStack other) || other.hash != hash || other.depth != depth) {
            return false;
        }
        ParseStack a = this;
        ParseStack b = other;
        while (a != b) {
            if (!a.top.equals(b.top)) {
                return false;
            }
            a = a.rest;
            b = b.rest;
        }
        return true;
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
