package io.zse.tokenizer.template;

import java.util.List;
import java.util.Map;

/** Anything a template can call: globals such as {@code range}, macros, bound Python methods. */
@FunctionalInterface
interface TemplateCallable {
    Object call(List<Object> args, Map<String, Object> kwargs);
}
