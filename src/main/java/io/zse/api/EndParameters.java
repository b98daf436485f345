package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.generate.EndConditions;

import java.util.HashSet;
import java.util.Set;

/** Reads vLLM's end-of-generation parameters: ignore_eos, min_tokens, stop_token_ids, include_stop_str_in_output. */
final class EndParameters {
    static final Set<String> NAMES = Set.of("ignore_eos", "min_tokens", "stop_token_ids", "include_stop_str_in_output");

    private EndParameters() {
    }

    static EndConditions read(JsonNode body, long maxTokens, int vocab) {
        boolean ignoreEos = RequestReader.bool(body, "ignore_eos", false);
        // vLLM refuses min_tokens above max_tokens; a default (unbounded) max_tokens allows any
        int minTokens = (int) RequestReader.integer(body, "min_tokens", 0, 0, Math.min(maxTokens, Integer.MAX_VALUE));
        Set<Integer> stopIds = new HashSet<>();
        JsonNode ids = body.get("stop_token_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) {
                throw ApiException.invalid("stop_token_ids must be an array of token ids", "stop_token_ids");
            }
            if (!RequestReader.allIntegers(ids)) {
                throw ApiException.invalid("stop_token_ids must be an array of integers", "stop_token_ids");
            }
            for (int id : RequestReader.tokenIds(ids, vocab, "stop_token_ids")) {
                stopIds.add(id);
            }
        }
        boolean include = RequestReader.bool(body, "include_stop_str_in_output", false);
        return new EndConditions(ignoreEos, minTokens, stopIds, include);
    }
}
