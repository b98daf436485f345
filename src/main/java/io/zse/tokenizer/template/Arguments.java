package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;

/** Positional and keyword arguments of one call, read the way a Python signature binds them. */
record Arguments(String function, List<Object> args, Map<String, Object> kwargs) {
    Object optional(int index, String name, Object fallback) {
        if (index < args.size()) {
            return args.get(index);
        }
        return kwargs.containsKey(name) ? kwargs.get(name) : fallback;
    }

    Object required(int index, String name) {
        if (index >= args.size() && !kwargs.containsKey(name)) {
            throw new ChatTemplateException(function + "() missing required argument '" + name + "'");
        }
        return optional(index, name, null);
    }

    String string(int index, String name) {
        Object v = required(index, name);
        if (!PyValues.isString(v)) {
            throw new ChatTemplateException(function + "() argument '" + name + "' must be str, not "
                    + PyRepr.typeName(v));
        }
        return PyValues.text(v);
    }

    String optionalString(int index, String name) {
        Object v = optional(index, name, null);
        if (v == null || v instanceof Undefined) {
            return null;
        }
        return string(index, name);
    }

    long optionalLong(int index, String name, long fallback) {
        Object v = optional(index, name, null);
        if (v == null) {
            return fallback;
        }
        if (!PyValues.isInt(v)) {
            throw new ChatTemplateException(function + "() argument '" + name + "' must be int, not "
                    + PyRepr.typeName(v));
        }
        return PyValues.toLong(v);
    }

    boolean flag(int index, String name, boolean fallback) {
        Object v = optional(index, name, null);
        return v == null ? fallback : PyValues.truthy(v);
    }

    Object positional(int index) {
        if (index >= args.size()) {
            throw new ChatTemplateException("Replacement index " + index + " out of range for positional args tuple");
        }
        return args.get(index);
    }

    Object keyword(String name) {
        if (!kwargs.containsKey(name)) {
            throw new ChatTemplateException("KeyError: " + PyRepr.repr(name));
        }
        return kwargs.get(name);
    }
}
