package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;

/** A {@code {% macro %}} bound to the scope it was defined in; calling it renders its body to a string. */
record Macro(Node.Macro definition, Scope definedIn, TemplateRenderer renderer) implements TemplateCallable {
    @Override
    public Object call(List<Object> args, Map<String, Object> kwargs) {
        List<String> params = definition.params();
        if (args.size() > params.size()) {
            throw new ChatTemplateException("macro '" + definition.name() + "' takes not more than "
                    + params.size() + " argument(s)");
        }
        Scope scope = new Scope(definedIn);
        for (String key : kwargs.keySet()) {
            if (!params.contains(key)) {
                throw new ChatTemplateException("macro '" + definition.name() + "' takes no keyword argument '"
                        + key + "'");
            }
        }
        for (int i = 0; i < params.size(); i++) {
            String name = params.get(i);
            Object value;
            if (i < args.size()) {
                value = args.get(i);
            } else if (kwargs.containsKey(name)) {
                value = kwargs.get(name);
            } else if (definition.defaults().get(i) != null) {
                value = renderer.evaluate(definition.defaults().get(i), scope);
            } else {
                value = new Undefined("parameter '" + name + "' was not provided");
            }
            scope.set(name, value);
        }
        StringBuilder out = new StringBuilder();
        renderer.execute(definition.body(), scope, out);
        return out.toString();
    }
}
