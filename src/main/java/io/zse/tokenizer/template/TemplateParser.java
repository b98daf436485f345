package io.zse.tokenizer.template;

import io.zse.tokenizer.template.Token.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Recursive-descent parser following Jinja2's grammar and operator precedence (jinja2/parser.py). */
final class TemplateParser {
    private static final Set<String> COMPARE_OPS = Set.of("==", "!=", "<", "<=", ">", ">=");

    private final List<Token> tokens;
    private int p;

    private TemplateParser(List<Token> tokens) {
        this.tokens = tokens;
    }

    static List<Node> parse(String source) {
        TemplateParser parser = new TemplateParser(TemplateLexer.tokenize(source));
        return parser.parseBody(Set.of());
    }

    // ---- statements ----

    /** Parses until EOF or a block tag whose name is in {@code endNames}; leaves that name as the current token. */
    private List<Node> parseBody(Set<String> endNames) {
        List<Node> body = new ArrayList<>();
        while (true) {
            Token t = next();
            switch (t.kind()) {
                case DATA -> body.add(new Node.Text(t.text()));
                case VARIABLE_BEGIN -> {
                    Expr value = parseTuple(false, true, Set.of(), false);
                    expect(Kind.VARIABLE_END);
                    body.add(new Node.Print(value));
                }
                case BLOCK_BEGIN -> {
                    if (current().is(Kind.NAME) && endNames.contains(current().text())) {
                        return body;
                    }
                    body.add(parseStatement());
                    expect(Kind.BLOCK_END);
                }
                case EOF -> {
                    if (!endNames.isEmpty()) {
                        throw error("Unexpected end of template. Jinja was looking for the following tags: "
                                + String.join(" or ", endNames.stream().sorted().map(n -> "'" + n + "'").toList()) + ".",
                                t);
                    }
                    return body;
                }
                default -> throw error("unexpected " + t.describe(), t);
            }
        }
    }

    /** {@code %}} then a body up to one of {@code endNames}; the end name is consumed when {@code dropEnd}. */
    private List<Node> parseStatements(Set<String> endNames, boolean dropEnd) {
        expect(Kind.BLOCK_END);
        List<Node> body = parseBody(endNames);
        if (dropEnd) {
            next();
        }
        return body;
    }

    private Node parseStatement() {
        Token t = current();
        if (!t.is(Kind.NAME)) {
            throw error("tag name expected", t);
        }
        next();
        return switch (t.text()) {
            case "for" -> parseFor();
            case "if" -> parseIf();
            case "set" -> parseSet();
            case "macro" -> parseMacro();
            case "filter" -> {
                Expr filters = parseFilters(Node.BlockValue.INSTANCE, true);
                yield new Node.FilterBlock(filters, parseStatements(Set.of("endfilter"), true));
            }
            case "with" -> parseWith();
            case "generation" -> new Node.Scoped(List.of(), List.of(), parseStatements(Set.of("endgeneration"), true));
            case "break" -> new Node.Break();
            case "continue" -> new Node.Continue();
            default -> throw error("Encountered unknown tag '" + t.text() + "'.", t);
        };
    }

    private Node parseFor() {
        Node.Target target = toTarget(parseTuple(true, true, Set.of("in"), false));
        expectName("in");
        Expr iterable = parseTuple(false, false, Set.of("recursive"), false);
        Expr filter = null;
        if (skipName("if")) {
            filter = parseExpression(true);
        }
        if (current().isName("recursive")) {
            throw error("recursive loops are not supported", current());
        }
        List<Node> body = parseStatements(Set.of("endfor", "else"), false);
        List<Node> otherwise = List.of();
        if (next().text().equals("else")) {
            otherwise = parseStatements(Set.of("endfor"), true);
        }
        return new Node.For(target, iterable, filter, body, otherwise);
    }

    private Node parseIf() {
        List<Expr> tests = new ArrayList<>();
        List<List<Node>> bodies = new ArrayList<>();
        List<Node> otherwise = List.of();
        while (true) {
            tests.add(parseTuple(false, false, Set.of(), false));
            bodies.add(parseStatements(Set.of("elif", "else", "endif"), false));
            String end = next().text();
            if (end.equals("elif")) {
                continue;
            }
            if (end.equals("else")) {
                otherwise = parseStatements(Set.of("endif"), true);
            }
            return new Node.If(tests, bodies, otherwise);
        }
    }

    private Node parseSet() {
        Node.Target target;
        if (current().is(Kind.NAME) && peek(1).isOperator(".")) {
            String owner = next().text();
            next();
            target = new Node.Target.Attribute(owner, expect(Kind.NAME).text());
        } else {
            target = toTarget(parseTuple(true, true, Set.of(), false));
        }
        if (skipOperator("=")) {
            return new Node.Set(target, parseTuple(false, true, Set.of(), false));
        }
        Expr filters = parseFilters(Node.BlockValue.INSTANCE, false);
        return new Node.SetBlock(target, filters, parseStatements(Set.of("endset"), true));
    }

    private Node parseMacro() {
        String name = expect(Kind.NAME).text();
        List<String> params = new ArrayList<>();
        List<Expr> defaults = new ArrayList<>();
        expectOperator("(");
        while (!current().isOperator(")")) {
            if (!params.isEmpty()) {
                expectOperator(",");
            }
            params.add(expect(Kind.NAME).text());
            if (skipOperator("=")) {
                defaults.add(parseExpression(true));
            } else if (defaults.stream().anyMatch(d -> d != null)) {
                throw error("non-default argument follows default argument", current());
            } else {
                defaults.add(null);
            }
        }
        expectOperator(")");
        return new Node.Macro(name, params, defaults, parseStatements(Set.of("endmacro"), true));
    }

    private Node parseWith() {
        List<Node.Target> targets = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        while (!current().is(Kind.BLOCK_END)) {
            if (!targets.isEmpty()) {
                expectOperator(",");
            }
            targets.add(toTarget(parseTuple(true, true, Set.of(), false)));
            expectOperator("=");
            values.add(parseExpression(true));
        }
        return new Node.Scoped(targets, values, parseStatements(Set.of("endwith"), true));
    }

    private Node.Target toTarget(Expr e) {
        return switch (e) {
            case Expr.Name n -> new Node.Target.Name(n.name());
            case Expr.TupleLiteral t -> new Node.Target.Unpack(t.items().stream().map(this::toTarget).toList());
            default -> throw error("can't assign to " + e.getClass().getSimpleName(), current());
        };
    }

    // ---- expressions ----

    /** Jinja2's parse_tuple: a bare comma list is a tuple; {@code simplified} allows only primaries (assignment targets). */
    private Expr parseTuple(boolean simplified, boolean withConditional, Set<String> extraEnd, boolean explicitParens) {
        List<Expr> items = new ArrayList<>();
        boolean isTuple = false;
        while (true) {
            if (!items.isEmpty()) {
                expectOperator(",");
            }
            if (isTupleEnd(extraEnd)) {
                break;
            }
            items.add(simplified ? parsePrimary() : parseExpression(withConditional));
            if (current().isOperator(",")) {
                isTuple = true;
            } else {
                break;
            }
        }
        if (!isTuple) {
            if (!items.isEmpty()) {
                return items.getFirst();
            }
            if (!explicitParens) {
                throw error("Expected an expression, got " + current().describe(), current());
            }
        }
        return new Expr.TupleLiteral(List.copyOf(items));
    }

    private boolean isTupleEnd(Set<String> extraEnd) {
        Token t = current();
        return t.is(Kind.VARIABLE_END) || t.is(Kind.BLOCK_END) || t.isOperator(")")
                || (t.is(Kind.NAME) && extraEnd.contains(t.text()));
    }

    private Expr parseExpression(boolean withConditional) {
        return withConditional ? parseConditional() : parseOr();
    }

    private Expr parseConditional() {
        Expr expr = parseOr();
        while (skipName("if")) {
            Expr test = parseOr();
            Expr otherwise = skipName("else") ? parseConditional() : null;
            expr = new Expr.Conditional(test, expr, otherwise);
        }
        return expr;
    }

    private Expr parseOr() {
        Expr left = parseAnd();
        while (skipName("or")) {
            left = new Expr.Binary("or", left, parseAnd());
        }
        return left;
    }

    private Expr parseAnd() {
        Expr left = parseNot();
        while (skipName("and")) {
            left = new Expr.Binary("and", left, parseNot());
        }
        return left;
    }

    private Expr parseNot() {
        if (skipName("not")) {
            return new Expr.Unary("not", parseNot());
        }
        return parseCompare();
    }

    private Expr parseCompare() {
        Expr first = parseMath1();
        List<String> ops = new ArrayList<>();
        List<Expr> operands = new ArrayList<>();
        while (true) {
            Token t = current();
            if (t.is(Kind.OPERATOR) && COMPARE_OPS.contains(t.text())) {
                next();
                ops.add(t.text());
            } else if (t.isName("in")) {
                next();
                ops.add("in");
            } else if (t.isName("not") && peek(1).isName("in")) {
                p += 2;
                ops.add("notin");
            } else {
                break;
            }
            operands.add(parseMath1());
        }
        return ops.isEmpty() ? first : new Expr.Compare(first, ops, operands);
    }

    private Expr parseMath1() {
        Expr left = parseConcat();
        while (current().isOperator("+") || current().isOperator("-")) {
            String op = next().text();
            left = new Expr.Binary(op, left, parseConcat());
        }
        return left;
    }

    private Expr parseConcat() {
        Expr left = parseMath2();
        while (skipOperator("~")) {
            left = new Expr.Binary("~", left, parseMath2());
        }
        return left;
    }

    private Expr parseMath2() {
        Expr left = parsePow();
        while (current().isOperator("*") || current().isOperator("/") || current().isOperator("//")
                || current().isOperator("%")) {
            String op = next().text();
            left = new Expr.Binary(op, left, parsePow());
        }
        return left;
    }

    private Expr parsePow() {
        Expr left = parseUnary(true);
        while (skipOperator("**")) {
            left = new Expr.Binary("**", left, parseUnary(true));
        }
        return left;
    }

    private Expr parseUnary(boolean withFilter) {
        Expr node;
        if (skipOperator("-")) {
            node = new Expr.Unary("-", parseUnary(false));
        } else if (skipOperator("+")) {
            node = new Expr.Unary("+", parseUnary(false));
        } else {
            node = parsePostfix(parsePrimary());
        }
        return withFilter ? parseFilterExpr(node) : node;
    }

    private Expr parsePrimary() {
        Token t = next();
        switch (t.kind()) {
            case NAME -> {
                return switch (t.text()) {
                    case "true", "True" -> new Expr.Literal(Boolean.TRUE);
                    case "false", "False" -> new Expr.Literal(Boolean.FALSE);
                    case "none", "None" -> new Expr.Literal(null);
                    default -> new Expr.Name(t.text());
                };
            }
            case STRING -> {
                StringBuilder s = new StringBuilder(t.text());
                while (current().is(Kind.STRING)) {
                    s.append(next().text());
                }
                return new Expr.Literal(s.toString());
            }
            case INTEGER, FLOAT -> {
                return new Expr.Literal(t.value());
            }
            case OPERATOR -> {
                switch (t.text()) {
                    case "(" -> {
                        Expr e = parseTuple(false, true, Set.of(), true);
                        expectOperator(")");
                        return e;
                    }
                    case "[" -> {
                        List<Expr> items = new ArrayList<>();
                        while (!current().isOperator("]")) {
                            if (!items.isEmpty()) {
                                expectOperator(",");
                            }
                            if (current().isOperator("]")) {
                                break;
                            }
                            items.add(parseExpression(true));
                        }
                        expectOperator("]");
                        return new Expr.ListLiteral(items);
                    }
                    case "{" -> {
                        List<Expr> keys = new ArrayList<>();
                        List<Expr> values = new ArrayList<>();
                        while (!current().isOperator("}")) {
                            if (!keys.isEmpty()) {
                                expectOperator(",");
                            }
                            if (current().isOperator("}")) {
                                break;
                            }
                            keys.add(parseExpression(true));
                            expectOperator(":");
                            values.add(parseExpression(true));
                        }
                        expectOperator("}");
                        return new Expr.DictLiteral(keys, values);
                    }
                    default -> { }
                }
            }
            default -> { }
        }
        throw error("unexpected " + t.describe(), t);
    }

    private Expr parsePostfix(Expr node) {
        while (true) {
            if (current().isOperator(".") || current().isOperator("[")) {
                node = parseSubscript(node);
            } else if (current().isOperator("(")) {
                node = new Expr.Call(node, parseCallArgs());
            } else {
                return node;
            }
        }
    }

    private Expr parseFilterExpr(Expr node) {
        while (true) {
            if (current().isOperator("|")) {
                node = parseFilters(node, false);
            } else if (current().isName("is")) {
                node = parseTest(node);
            } else if (current().isOperator("(")) {
                node = new Expr.Call(node, parseCallArgs());
            } else {
                return node;
            }
        }
    }

    private Expr parseSubscript(Expr node) {
        Token t = next();
        if (t.isOperator(".")) {
            Token attr = next();
            if (attr.is(Kind.NAME)) {
                return new Expr.GetAttr(node, attr.text());
            }
            if (attr.is(Kind.INTEGER)) {
                return new Expr.GetItem(node, new Expr.Literal(attr.value()));
            }
            throw error("expected name or number", attr);
        }
        List<Expr> args = new ArrayList<>();
        while (!current().isOperator("]")) {
            if (!args.isEmpty()) {
                expectOperator(",");
            }
            args.add(parseSubscribed(node));
        }
        expectOperator("]");
        if (args.size() == 1) {
            Expr only = args.getFirst();
            return only instanceof Expr.Slice ? only : new Expr.GetItem(node, only);
        }
        return new Expr.GetItem(node, new Expr.TupleLiteral(args));
    }

    /** One subscript: an expression, or a slice {@code start:stop:step} with any part left out. */
    private Expr parseSubscribed(Expr target) {
        Expr start = null;
        if (!skipOperator(":")) {
            start = parseExpression(true);
            if (!skipOperator(":")) {
                return start;
            }
        }
        Expr stop = null;
        if (!current().isOperator(":") && !current().isOperator("]") && !current().isOperator(",")) {
            stop = parseExpression(true);
        }
        Expr step = null;
        if (skipOperator(":") && !current().isOperator("]") && !current().isOperator(",")) {
            step = parseExpression(true);
        }
        return new Expr.Slice(target, start, stop, step);
    }

    private Expr.Args parseCallArgs() {
        expectOperator("(");
        List<Expr> positional = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Expr> values = new ArrayList<>();
        boolean requireComma = false;
        while (!current().isOperator(")")) {
            if (requireComma) {
                expectOperator(",");
                if (current().isOperator(")")) {
                    break;
                }
            }
            if (current().is(Kind.NAME) && peek(1).isOperator("=")) {
                names.add(next().text());
                next();
                values.add(parseExpression(true));
            } else {
                if (!names.isEmpty()) {
                    throw error("positional argument follows keyword argument", current());
                }
                positional.add(parseExpression(true));
            }
            requireComma = true;
        }
        expectOperator(")");
        return positional.isEmpty() && names.isEmpty() ? Expr.Args.NONE : new Expr.Args(positional, names, values);
    }

    /** {@code | name(args) | ...}; {@code inline} means the first pipe is implied (the filter tag). */
    private Expr parseFilters(Expr node, boolean inline) {
        while (current().isOperator("|") || inline) {
            if (!inline) {
                next();
            }
            inline = false;
            String name = dottedName();
            Expr.Args args = current().isOperator("(") ? parseCallArgs() : Expr.Args.NONE;
            node = new Expr.Filter(node, name, args);
        }
        return node;
    }

    private Expr parseTest(Expr node) {
        next(); // 'is'
        boolean negated = skipName("not");
        String name = dottedName();
        Expr.Args args = Expr.Args.NONE;
        Token t = current();
        if (t.isOperator("(")) {
            args = parseCallArgs();
        } else if ((t.is(Kind.NAME) || t.is(Kind.STRING) || t.is(Kind.INTEGER) || t.is(Kind.FLOAT)
                || t.isOperator("[") || t.isOperator("{"))
                && !t.isName("else") && !t.isName("or") && !t.isName("and")) {
            if (t.isName("is")) {
                throw error("You cannot chain multiple tests with is", t);
            }
            args = new Expr.Args(List.of(parsePostfix(parsePrimary())), List.of(), List.of());
        }
        return new Expr.Test(node, name, args, negated);
    }

    private String dottedName() {
        StringBuilder name = new StringBuilder(expect(Kind.NAME).text());
        while (skipOperator(".")) {
            name.append('.').append(expect(Kind.NAME).text());
        }
        return name.toString();
    }

    // ---- token stream ----

    private Token current() {
        return tokens.get(p);
    }

    private Token peek(int ahead) {
        return tokens.get(Math.min(p + ahead, tokens.size() - 1));
    }

    private Token next() {
        Token t = tokens.get(p);
        if (p < tokens.size() - 1) {
            p++;
        }
        return t;
    }

    private Token expect(Kind kind) {
        Token t = current();
        if (!t.is(kind)) {
            throw error("expected " + kind.name().toLowerCase().replace('_', ' ') + ", got " + t.describe(), t);
        }
        return next();
    }

    private void expectOperator(String op) {
        if (!current().isOperator(op)) {
            throw error("expected '" + op + "', got " + current().describe(), current());
        }
        next();
    }

    private void expectName(String name) {
        if (!current().isName(name)) {
            throw error("expected '" + name + "', got " + current().describe(), current());
        }
        next();
    }

    private boolean skipName(String name) {
        if (current().isName(name)) {
            next();
            return true;
        }
        return false;
    }

    private boolean skipOperator(String op) {
        if (current().isOperator(op)) {
            next();
            return true;
        }
        return false;
    }

    private static ChatTemplateException error(String message, Token at) {
        return new ChatTemplateException("template syntax error: " + message + " (line " + at.line() + ")");
    }
}
