package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import io.zse.format.SmallJsonParser;
import io.zse.tokenizer.template.ChatTemplate;

import java.util.Optional;

/**
 * What a Hugging Face {@code tokenizer_config.json} says about prompting: the chat template and the bos/eos token
 * strings it is rendered with.
 *
 * @param chatTemplate the default template source, or null when the model has none
 * @param bosToken     null when the tokenizer has no BOS token (the template then sees it undefined)
 */
public record TokenizerConfig(String chatTemplate, String bosToken, String eosToken) {

    public static TokenizerConfig parse(byte[] json) {
        JsonNode root = SmallJsonParser.parse(json, 0, json.length, "tokenizer_config.json");
        return new TokenizerConfig(template(root.path("chat_template")), token(root.path("bos_token")),
                token(root.path("eos_token")));
    }

    /** The compiled chat template, if the model has one. */
    public Optional<ChatTemplate> compiledChatTemplate() {
        return Optional.ofNullable(chatTemplate).map(ChatTemplate::compile);
    }

    /** A string, or a list of named templates of which transformers uses the one named "default". */
    private static String template(JsonNode node) {
        if (node.isTextual()) {
            return node.asText();
        }
        if (node.isArray()) {
            for (JsonNode named : node) {
                if ("default".equals(named.path("name").asText())) {
                    return named.path("template").asText();
                }
            }
        }
        return null;
    }

    /** A plain string, or a serialized AddedToken object with its text under "content". */
    private static String token(JsonNode node) {
        if (node.isTextual()) {
            return node.asText();
        }
        return node.isObject() && node.path("content").isTextual() ? node.get("content").asText() : null;
    }
}
