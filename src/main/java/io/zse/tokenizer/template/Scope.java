package io.zse.tokenizer.template;

import java.util.HashMap;
import java.util.Map;

/** One frame of variables; {@code set} writes to the innermost frame, lookups walk outwards (Jinja2's scoping). */
final class Scope {
    private final Scope parent;
    private final Map<String, Object> vars;

    Scope(Scope parent) {
        this(parent, new HashMap<>(8));
    }

    Scope(Scope parent, Map<String, Object> vars) {
        this.parent = parent;
        this.vars = vars;
    }

    Object lookup(String name) {
        for (Scope s = this; s != null; s = s.parent) {
            Object v = s.vars.get(name);
            if (v != null || s.vars.containsKey(name)) {
                return v;
            }
        }
        return Undefined.name(name);
    }

    void set(String name, Object value) {
        vars.put(name, value);
    }
}
