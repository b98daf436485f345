package io.zse.tokenizer;

import java.util.HashMap;
import java.util.Map;

/** The model's token strings and ids, both ways. */
final class Vocabulary {
    /** Ids at or above this are refused (the largest vocabularies hold a few hundred thousand tokens). */
    static final int MAX_ID = (1 << 24) - 1;

    private final Map<String, Integer> ids;
    private final String[] tokens;

    /** {@code tokens[id]} is the token of id, null for ids the model does not use. */
    Vocabulary(String[] tokens) {
        this.tokens = tokens;
        this.ids = HashMap.newHashMap(tokens.length);
        for (int id = 0; id < tokens.length; id++) {
            if (tokens[id] != null) {
                ids.put(tokens[id], id);
            }
        }
    }

    /** The id of {@code token}, or -1. */
    int id(String token) {
        Integer id = ids.get(token);
        return id == null ? -1 : id;
    }

    /** The token of {@code id}, or null. */
    String token(int id) {
        return id >= 0 && id < tokens.length ? tokens[id] : null;
    }

    /** The token of every id, null where unused; the caller must not modify it. */
    String[] tokens() {
        return tokens;
    }

    /** One past the largest id. */
    int size() {
        return tokens.length;
    }
}
