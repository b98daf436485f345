package io.zse.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The {@code {"String": ...}} or {@code {"Regex": ...}} pattern of Split, Replace normalizer and Replace decoder,
 * compiled to a java.util.regex pattern with Unicode classes so \s, \w, \p{..} and (?i) mean what Oniguruma means.
 */
final class TextPattern {
    static final int FLAGS = Pattern.UNICODE_CHARACTER_CLASS | Pattern.UNICODE_CASE;

    private final Pattern regex;
    private final boolean empty;

    private TextPattern(Pattern regex, boolean empty) {
        this.regex = regex;
        this.empty = empty;
    }

    static TextPattern literal(String text) {
        return new TextPattern(Pattern.compile(Pattern.quote(text)), text.isEmpty());
    }

    static TextPattern regex(String source, String component) {
        // \h and \H mean "hex digit" in Oniguruma but "horizontal space" in Java: refuse rather than guess.
        if (source.contains("\\h") || source.contains("\\H")) {
            throw new UnsupportedTokenizerException("unsupported regex construct \\h in " + component);
        }
        try {
            return new TextPattern(Pattern.compile(source, FLAGS), false);
        } catch (PatternSyntaxException e) {
            throw new UnsupportedTokenizerException("unsupported regex in " + component + ": " + e.getDescription());
        }
    }

    static TextPattern fromJson(JsonNode node, String component) {
        if (node != null && node.has("String")) {
            return literal(node.get("String").asText());
        }
        if (node != null && node.has("Regex")) {
            return regex(node.get("Regex").asText(), component);
        }
        throw new UnsupportedTokenizerException("unsupported pattern in " + component + ": " + node);
    }

    Pattern regex() {
        return regex;
    }

    /** An empty literal matches nothing in Hugging Face (rather than everywhere). */
    boolean matchesNothing() {
        return empty;
    }

    String replaceAll(String text, String replacement) {
        return empty ? text : regex.matcher(text).replaceAll(java.util.regex.Matcher.quoteReplacement(replacement));
    }
}
