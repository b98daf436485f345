package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;

/** A Python method looked up on a value, such as {@code message.content.startswith}, waiting to be called. */
record BoundMethod(Object self, String name) implements TemplateCallable {
    @Override
    public Object call(List<Object> args, Map<String, Object> kwargs) {
        return PyMethods.call(self, name, args, kwargs);
    }
}
