package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;

/** When Metaspace puts the replacement character in front of a piece. */
enum PrependScheme {
    ALWAYS, FIRST, NEVER;

    /** Reads "prepend_scheme", or the older boolean "add_prefix_space". */
    static PrependScheme fromJson(JsonNode node, String component) {
        JsonNode scheme = node.get("prepend_scheme");
        if (scheme == null || scheme.isNull()) {
            JsonNode legacy = node.get("add_prefix_space");
            return legacy == null || legacy.asBoolean(true) ? ALWAYS : NEVER;
        }
        return switch (scheme.asText()) {
            case "always" -> ALWAYS;
            case "first" -> FIRST;
            case "never" -> NEVER;
            default -> throw new UnsupportedTokenizerException(
                    "unsupported prepend_scheme '" + scheme.asText() + "' in " + component);
        };
    }
}
