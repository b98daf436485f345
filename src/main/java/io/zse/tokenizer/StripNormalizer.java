package io.zse.tokenizer;

/** Removes Unicode whitespace at the left and/or right end. */
record StripNormalizer(boolean left, boolean right) implements Normalizer {
    @Override
    public boolean keepsStart(String text) {
        return !left || text.isEmpty() || !UnicodeWhitespace.is(text.codePointAt(0));
    }

    @Override
    public String normalize(String text) {
        int start = 0;
        int end = text.length();
        while (left && start < end && UnicodeWhitespace.is(text.codePointAt(start))) {
            start += Character.charCount(text.codePointAt(start));
        }
        while (right && end > start && UnicodeWhitespace.is(text.codePointBefore(end))) {
            end -= Character.charCount(text.codePointBefore(end));
        }
        return text.substring(start, end);
    }
}
