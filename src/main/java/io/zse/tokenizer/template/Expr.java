package io.zse.tokenizer.template;

import java.util.List;

/** Expression nodes of the template AST. */
sealed interface Expr {
    /** Call arguments: positional expressions and keyword expressions in source order. */
    record Args(List<Expr> positional, List<String> keywordNames, List<Expr> keywordValues) {
        static final Args NONE = new Args(List.of(), List.of(), List.of());
    }

    record Literal(Object value) implements Expr { }

    record Name(String name) implements Expr { }

    record ListLiteral(List<Expr> items) implements Expr { }

    record TupleLiteral(List<Expr> items) implements Expr { }

    record DictLiteral(List<Expr> keys, List<Expr> values) implements Expr { }

    /** {@code obj.name}: Python attribute first, then item, like Jinja2's getattr. */
    record GetAttr(Expr target, String name) implements Expr { }

    /** {@code obj[key]}: item first, then attribute, like Jinja2's getitem. */
    record GetItem(Expr target, Expr key) implements Expr { }

    /** {@code obj[start:stop:step]}; absent parts are null. */
    record Slice(Expr target, Expr start, Expr stop, Expr step) implements Expr { }

    record Call(Expr callee, Args args) implements Expr { }

    record Filter(Expr value, String name, Args args) implements Expr { }

    record Test(Expr value, String name, Args args, boolean negated) implements Expr { }

    /** {@code not}, unary {@code -} and {@code +}. */
    record Unary(String op, Expr operand) implements Expr { }

    /** Arithmetic, {@code ~}, {@code and}, {@code or}. */
    record Binary(String op, Expr left, Expr right) implements Expr { }

    /** A chain such as {@code a < b <= c}; ops are ==, !=, <, <=, >, >=, in, notin. */
    record Compare(Expr first, List<String> ops, List<Expr> operands) implements Expr { }

    /** {@code then if test else otherwise}; otherwise is null when the else part is left out. */
    record Conditional(Expr test, Expr then, Expr otherwise) implements Expr { }
}
