package io.zse.tokenizer.template;

/**
 * Jinja2's default {@code Undefined}: prints as "", is falsy, iterates as empty, has length 0;
 * anything else (attribute, item, arithmetic, ordering, calling) fails with {@link #hint()}.
 */
record Undefined(String hint) {
    static Undefined name(String name) {
        return new Undefined("'" + name + "' is undefined");
    }

    static Undefined attribute(Object owner, Object key) {
        String what = key instanceof String s ? "attribute " + PyRepr.repr(s) : "element " + PyRepr.repr(key);
        String type = owner == null ? "None" : PyRepr.typeName(owner) + " object";
        return new Undefined("'" + type + "' has no " + what);
    }

    ChatTemplateException fail() {
        return new ChatTemplateException(hint);
    }
}
