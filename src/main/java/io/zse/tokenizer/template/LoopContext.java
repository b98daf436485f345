package io.zse.tokenizer.template;

import java.util.List;

/** The {@code loop} variable inside a {@code for} body. */
final class LoopContext {
    private final List<?> items;
    private int index0;

    LoopContext(List<?> items) {
        this.items = items;
    }

    void advance(int index0) {
        this.index0 = index0;
    }

    Object attribute(String name) {
        int length = items.size();
        return switch (name) {
            case "index" -> (long) index0 + 1;
            case "index0" -> (long) index0;
            case "revindex" -> (long) (length - index0);
            case "revindex0" -> (long) (length - index0 - 1);
            case "first" -> index0 == 0;
            case "last" -> index0 == length - 1;
            case "length" -> (long) length;
            case "depth" -> 1L;
            case "depth0" -> 0L;
            case "previtem" -> index0 > 0 ? items.get(index0 - 1) : new Undefined("there is no previous item");
            case "nextitem" -> index0 + 1 < length ? items.get(index0 + 1) : new Undefined("there is no next item");
            case "cycle" -> (TemplateCallable) (args, kwargs) -> {
                if (args.isEmpty()) {
                    throw new ChatTemplateException("no items for cycling given");
                }
                return args.get(index0 % args.size());
            };
            default -> Undefined.attribute(this, name);
        };
    }
}
