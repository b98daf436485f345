package io.zse.generate.grammar;

/**
 * Where a parse is inside one rule: the node, a phase (strings and numbers) and a position (the next byte of a
 * literal, the next part of a sequence, digits written, UTF-8 bytes still due).
 */
final class Frame {
    final GrammarNode node;
    final int phase;
    final int position;
    private final int hash;

    Frame(GrammarNode node, int phase, int position) {
        this.node = node;
        this.phase = phase;
        this.position = position;
        this.hash = (System.identityHashCode(node) * 31 + phase) * 31 + position;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Frame f && f.node == node && f.phase == phase && f.position == position;
    }

    @Override
    public int hashCode() {
        return hash;
    }
}
