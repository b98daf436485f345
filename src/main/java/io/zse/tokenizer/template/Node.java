package io.zse.tokenizer.template;

import java.util.List;

/** Statement nodes of the template AST. */
sealed interface Node {
    /** Where a {@code for} or {@code set} stores: a name, {@code ns.attr}, or a tuple to unpack. */
    sealed interface Target {
        record Name(String name) implements Target { }

        record Attribute(String owner, String attribute) implements Target { }

        record Unpack(List<Target> targets) implements Target { }
    }

    record Text(String text) implements Node { }

    record Print(Expr value) implements Node { }

    record If(List<Expr> tests, List<List<Node>> bodies, List<Node> otherwise) implements Node { }

    record For(Target target, Expr iterable, Expr filter, List<Node> body, List<Node> otherwise) implements Node { }

    record Set(Target target, Expr value) implements Node { }

    /** {@code {% set x | filters %}body{% endset %}}: filters are applied to a placeholder standing for the body. */
    record SetBlock(Target target, Expr filters, List<Node> body) implements Node { }

    record Macro(String name, List<String> params, List<Expr> defaults, List<Node> body) implements Node { }

    /** {@code {% filter f %}body{% endfilter %}}; the filter chain is applied to {@link BlockValue#INSTANCE}. */
    record FilterBlock(Expr filters, List<Node> body) implements Node { }

    /** Transformers' {@code {% generation %}} tag, and {@code {% with %}}: a body rendered in its own scope. */
    record Scoped(List<Target> targets, List<Expr> values, List<Node> body) implements Node { }

    record Break() implements Node { }

    record Continue() implements Node { }

    /** Placeholder name for a block's rendered text inside a filter chain. */
    final class BlockValue {
        static final Expr INSTANCE = new Expr.Name("\u0000block");

        private BlockValue() {
        }
    }
}
