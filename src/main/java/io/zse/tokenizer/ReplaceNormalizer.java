package io.zse.tokenizer;

/** Replaces every match of a literal or regex pattern. */
record ReplaceNormalizer(TextPattern pattern, String content) implements Normalizer {
    @Override
    public boolean keepsStart(String text) {
        if (!content.isEmpty() || pattern.matchesNothing()) {
            return true;
        }
        java.util.regex.Matcher matcher = pattern.regex().matcher(text);
        return !(matcher.lookingAt() && matcher.end() > 0);
    }

    @Override
    public String normalize(String text) {
        return pattern.replaceAll(text, content);
    }
}
