package io.zse.tokenizer.template;

import java.util.LinkedHashMap;
import java.util.Map;

/** The object {@code namespace(...)} returns: the one thing a {@code set} inside a loop can change for code after the loop. */
final class Namespace {
    final Map<String, Object> attributes = new LinkedHashMap<>();

    @Override
    public String toString() {
        return "<Namespace " + PyRepr.repr(attributes) + ">";
    }
}
