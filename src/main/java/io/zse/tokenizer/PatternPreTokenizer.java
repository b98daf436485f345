package io.zse.tokenizer;

import java.util.List;

/**
 * Splits at the matches of a pattern: the Split pre-tokenizer, and also Whitespace, WhitespaceSplit, Punctuation and
 * Digits, which Hugging Face defines as fixed patterns with a fixed behavior.
 */
record PatternPreTokenizer(TextPattern pattern, SplitBehavior behavior, boolean invert) implements PreTokenizer {

    static PatternPreTokenizer whitespace() {
        return new PatternPreTokenizer(TextPattern.regex("\\w+|[^\\w\\s]+", "Whitespace"), SplitBehavior.REMOVED, true);
    }

    static PatternPreTokenizer whitespaceSplit() {
        return new PatternPreTokenizer(TextPattern.regex("\\s", "WhitespaceSplit"), SplitBehavior.REMOVED, false);
    }

    static PatternPreTokenizer punctuation(SplitBehavior behavior) {
        // Rust's is_ascii_punctuation includes ASCII symbols such as $ + < = > ^ ` | ~, plus Unicode P* categories
        return new PatternPreTokenizer(TextPattern.regex("[\\p{gc=P}\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7E]",
                "Punctuation"), behavior, false);
    }

    static PatternPreTokenizer digits(boolean individually) {
        return new PatternPreTokenizer(TextPattern.regex("\\p{gc=Nd}|\\p{gc=Nl}|\\p{gc=No}", "Digits"),
                individually ? SplitBehavior.ISOLATED : SplitBehavior.CONTIGUOUS, false);
    }

    @Override
    public void split(Piece piece, List<Piece> out) {
        boolean first = true;
        String text = piece.text();
        for (String part : behavior.split(text, pattern, invert)) {
            // only the leading part can still start at the original offset 0
            out.add(new Piece(part, first && piece.atOrigin() && text.startsWith(part)));
            first = false;
        }
    }
}
