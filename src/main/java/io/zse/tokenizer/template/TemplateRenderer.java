package io.zse.tokenizer.template;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Walks the AST: executes statements into a StringBuilder and evaluates expressions. Stateless, so thread-safe. */
final class TemplateRenderer {
    static final TemplateRenderer INSTANCE = new TemplateRenderer();

    /** How a statement list finished: normally, or by {@code break}/{@code continue} inside a loop. */
    enum Flow { NORMAL, BREAK, CONTINUE }

    private static final Map<String, Object> GLOBALS = Map.of(
            "range", (TemplateCallable) TemplateRenderer::range,
            "namespace", (TemplateCallable) (args, kwargs) -> {
                Namespace ns = new Namespace();
                dict(args, kwargs).forEach((k, v) -> ns.attributes.put(PyRepr.str(k), v));
                return ns;
            },
            "dict", (TemplateCallable) TemplateRenderer::dict,
            "raise_exception", (TemplateCallable) (args, kwargs) -> {
                throw new ChatTemplateException(args.isEmpty() ? "" : PyRepr.str(args.getFirst()));
            },
            "strftime_now", (TemplateCallable) (args, kwargs) ->
                    Strftime.format(PyValues.text(new Arguments("strftime_now", args, kwargs).required(0, "format")),
                            java.time.LocalDateTime.now()));

    private TemplateRenderer() {
    }

    String render(List<Node> body, Map<String, Object> context) {
        Map<String, Object> vars = new HashMap<>(GLOBALS);
        vars.putAll(context);
        StringBuilder out = new StringBuilder(1024);
        execute(body, new Scope(null, vars), out);
        return out.toString();
    }

    Flow execute(List<Node> nodes, Scope scope, StringBuilder out) {
        for (Node node : nodes) {
            Flow flow = execute(node, scope, out);
            if (flow != Flow.NORMAL) {
                return flow;
            }
        }
        return Flow.NORMAL;
    }

    private Flow execute(Node node, Scope scope, StringBuilder out) {
        switch (node) {
            case Node.Text t -> out.append(t.text());
            case Node.Print p -> out.append(PyRepr.str(evaluate(p.value(), scope)));
            case Node.If i -> {
                for (int k = 0; k < i.tests().size(); k++) {
                    if (PyValues.truthy(evaluate(i.tests().get(k), scope))) {
                        return execute(i.bodies().get(k), scope, out);
                    }
                }
                return execute(i.otherwise(), scope, out);
            }
            case Node.For f -> {
                return executeFor(f, scope, out);
            }
            case Node.Set s -> assign(s.target(), evaluate(s.value(), scope), scope);
            case Node.SetBlock s -> assign(s.target(), renderBlock(s.body(), s.filters(), scope), scope);
            case Node.Macro m -> scope.set(m.name(), new Macro(m, scope, this));
            case Node.FilterBlock f -> out.append(PyRepr.str(renderBlock(f.body(), f.filters(), scope)));
            case Node.Scoped s -> {
                Scope inner = new Scope(scope);
                for (int k = 0; k < s.targets().size(); k++) {
                    assign(s.targets().get(k), evaluate(s.values().get(k), scope), inner);
                }
                return execute(s.body(), inner, out);
            }
            case Node.Break b -> {
                return Flow.BREAK;
            }
            case Node.Continue c -> {
                return Flow.CONTINUE;
            }
        }
        return Flow.NORMAL;
    }

    /** Each iteration gets a fresh frame: as in Jinja2, a {@code set} in the body is not seen by the next iteration. */
    private Flow executeFor(Node.For f, Scope scope, StringBuilder out) {
        List<?> items = PyValues.iterate(evaluate(f.iterable(), scope));
        if (f.filter() != null) {
            List<Object> kept = new ArrayList<>();
            for (Object item : items) {
                Scope probe = new Scope(scope);
                assign(f.target(), item, probe);
                if (PyValues.truthy(evaluate(f.filter(), probe))) {
                    kept.add(item);
                }
            }
            items = kept;
        }
        if (items.isEmpty()) {
            return execute(f.otherwise(), scope, out);
        }
        LoopContext loop = new LoopContext(items);
        for (int i = 0; i < items.size(); i++) {
            loop.advance(i);
            Scope iteration = new Scope(scope);
            iteration.set("loop", loop);
            assign(f.target(), items.get(i), iteration);
            if (execute(f.body(), iteration, out) == Flow.BREAK) {
                break;
            }
        }
        return Flow.NORMAL;
    }

    private Object renderBlock(List<Node> body, Expr filters, Scope scope) {
        StringBuilder text = new StringBuilder();
        execute(body, scope, text);
        Scope withBlock = new Scope(scope);
        withBlock.set(((Expr.Name) Node.BlockValue.INSTANCE).name(), text.toString());
        return evaluate(filters, withBlock);
    }

    private void assign(Node.Target target, Object value, Scope scope) {
        switch (target) {
            case Node.Target.Name n -> scope.set(n.name(), value);
            case Node.Target.Attribute a -> {
                if (!(scope.lookup(a.owner()) instanceof Namespace ns)) {
                    throw new ChatTemplateException("cannot assign attribute on non-namespace object");
                }
                ns.attributes.put(a.attribute(), value);
            }
            case Node.Target.Unpack u -> {
                List<?> items = PyValues.iterate(value);
                if (items.size() != u.targets().size()) {
                    throw new ChatTemplateException((items.size() > u.targets().size() ? "too many" : "not enough")
                            + " values to unpack (expected " + u.targets().size() + ", got " + items.size() + ")");
                }
                for (int i = 0; i < items.size(); i++) {
                    assign(u.targets().get(i), items.get(i), scope);
                }
            }
        }
    }

    Object evaluate(Expr expr, Scope scope) {
        return switch (expr) {
            case Expr.Literal l -> l.value();
            case Expr.Name n -> scope.lookup(n.name());
            case Expr.ListLiteral l -> {
                List<Object> items = new ArrayList<>(l.items().size());
                for (Expr item : l.items()) {
                    items.add(evaluate(item, scope));
                }
                yield items;
            }
            case Expr.TupleLiteral t -> {
                Object[] items = new Object[t.items().size()];
                for (int i = 0; i < items.length; i++) {
                    items[i] = evaluate(t.items().get(i), scope);
                }
                yield new PyTuple(items);
            }
            case Expr.DictLiteral d -> {
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < d.keys().size(); i++) {
                    Object key = evaluate(d.keys().get(i), scope);
                    map.put(key instanceof Markup m ? m.text() : key, evaluate(d.values().get(i), scope));
                }
                yield map;
            }
            case Expr.GetAttr g -> PyValues.getAttribute(evaluate(g.target(), scope), g.name());
            case Expr.GetItem g -> PyValues.getItem(evaluate(g.target(), scope), evaluate(g.key(), scope));
            case Expr.Slice s -> PyValues.slice(evaluate(s.target(), scope), sliceIndex(s.start(), scope),
                    sliceIndex(s.stop(), scope), sliceIndex(s.step(), scope));
            case Expr.Call c -> call(evaluate(c.callee(), scope), c.args(), scope);
            case Expr.Filter f -> BuiltinFilters.apply(f.name(), evaluate(f.value(), scope), arguments(f.name(), f.args(), scope));
            case Expr.Test t -> t.negated() != BuiltinTests.test(t.name(), evaluate(t.value(), scope),
                    arguments(t.name(), t.args(), scope));
            case Expr.Unary u -> {
                Object v = evaluate(u.operand(), scope);
                yield switch (u.op()) {
                    case "not" -> !PyValues.truthy(v);
                    case "-" -> PyValues.negate(v);
                    default -> PyValues.negate(PyValues.negate(v));
                };
            }
            case Expr.Binary b -> binary(b, scope);
            case Expr.Compare c -> compare(c, scope);
            case Expr.Conditional c -> {
                if (PyValues.truthy(evaluate(c.test(), scope))) {
                    yield evaluate(c.then(), scope);
                }
                yield c.otherwise() == null
                        ? new Undefined("the inline if-expression evaluated to false and no else section was defined.")
                        : evaluate(c.otherwise(), scope);
            }
        };
    }

    private Object sliceIndex(Expr e, Scope scope) {
        if (e == null) {
            return null;
        }
        Object v = evaluate(e, scope);
        if (v != null && !PyValues.isInt(v)) {
            throw new ChatTemplateException("slice indices must be integers or None or have an __index__ method");
        }
        return v;
    }

    private Object binary(Expr.Binary b, Scope scope) {
        Object left = evaluate(b.left(), scope);
        return switch (b.op()) {
            case "and" -> PyValues.truthy(left) ? evaluate(b.right(), scope) : left;
            case "or" -> PyValues.truthy(left) ? left : evaluate(b.right(), scope);
            case "~" -> PyRepr.str(left) + PyRepr.str(evaluate(b.right(), scope));
            default -> {
                Object right = evaluate(b.right(), scope);
                yield b.op().equals("%") && PyValues.isString(left)
                        ? PercentFormat.format(PyValues.text(left), right)
                        : PyValues.binary(b.op(), left, right);
            }
        };
    }

    private Object compare(Expr.Compare c, Scope scope) {
        Object left = evaluate(c.first(), scope);
        for (int i = 0; i < c.ops().size(); i++) {
            Object right = evaluate(c.operands().get(i), scope);
            String op = c.ops().get(i);
            boolean holds = switch (op) {
                case "==" -> PyValues.equal(left, right);
                case "!=" -> !PyValues.equal(left, right);
                case "<" -> PyValues.compare(left, right, op) < 0;
                case "<=" -> PyValues.compare(left, right, op) <= 0;
                case ">" -> PyValues.compare(left, right, op) > 0;
                case ">=" -> PyValues.compare(left, right, op) >= 0;
                case "in" -> PyValues.contains(right, left);
                case "notin" -> !PyValues.contains(right, left);
                default -> throw new IllegalStateException(op);
            };
            if (!holds) {
                return false;
            }
            left = right;
        }
        return true;
    }

    private Object call(Object callee, Expr.Args args, Scope scope) {
        if (callee instanceof TemplateCallable f) {
            Arguments a = arguments("call", args, scope);
            return f.call(a.args(), a.kwargs());
        }
        if (callee instanceof Undefined u) {
            throw u.fail();
        }
        throw new ChatTemplateException("'" + PyRepr.typeName(callee) + "' object is not callable");
    }

    private Arguments arguments(String function, Expr.Args args, Scope scope) {
        if (args == Expr.Args.NONE) {
            return new Arguments(function, List.of(), Map.of());
        }
        List<Object> positional = new ArrayList<>(args.positional().size());
        for (Expr e : args.positional()) {
            positional.add(evaluate(e, scope));
        }
        Map<String, Object> keywords = new LinkedHashMap<>();
        for (int i = 0; i < args.keywordNames().size(); i++) {
            keywords.put(args.keywordNames().get(i), evaluate(args.keywordValues().get(i), scope));
        }
        return new Arguments(function, positional, keywords);
    }

    private static Object range(List<Object> args, Map<String, Object> kwargs) {
        for (Object a : args) {
            if (!PyValues.isInt(a)) {
                throw new ChatTemplateException("'" + PyRepr.typeName(a) + "' object cannot be interpreted as an integer");
            }
        }
        long start = args.size() > 1 ? PyValues.toLong(args.get(0)) : 0;
        long stop = args.size() > 1 ? PyValues.toLong(args.get(1)) : args.isEmpty() ? 0 : PyValues.toLong(args.get(0));
        long step = args.size() > 2 ? PyValues.toLong(args.get(2)) : 1;
        if (step == 0) {
            throw new ChatTemplateException("range() arg 3 must not be zero");
        }
        List<Object> out = new ArrayList<>();
        for (long i = start; step > 0 ? i < stop : i > stop; i += step) {
            if (out.size() >= 100_000) {
                throw new ChatTemplateException(
                        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
            }
            out.add(i);
        }
        return out;
    }

    /** Python's {@code dict(mapping_or_pairs, **kwargs)}, keeping insertion order. */
    private static Map<Object, Object> dict(List<Object> args, Map<String, Object> kwargs) {
        Map<Object, Object> out = new LinkedHashMap<>();
        if (!args.isEmpty()) {
            Object source = args.getFirst();
            if (source instanceof Map<?, ?> m) {
                out.putAll(m);
            } else {
                for (Object pair : PyValues.iterate(source)) {
                    List<?> kv = PyValues.iterate(pair);
                    out.put(kv.get(0), kv.get(1));
                }
            }
        }
        out.putAll(kwargs);
        return out;
    }
}
