package io.zse.tokenizer.template;

import java.util.AbstractList;
import java.util.List;

/** An immutable Python tuple: a list for iteration and JSON, but printed as {@code (a, b)}. */
final class PyTuple extends AbstractList<Object> {
    private final Object[] items;

    PyTuple(Object... items) {
        this.items = items;
    }

    static PyTuple of(List<?> items) {
        return new PyTuple(items.toArray());
    }

    @Override
    public Object get(int index) {
        return items[index];
    }

    @Override
    public int size() {
        return items.length;
    }
}
