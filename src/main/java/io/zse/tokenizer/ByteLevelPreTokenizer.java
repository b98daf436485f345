package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.List;

/** Optionally adds a leading space and splits with the GPT-2 regex, then rewrites bytes as alphabet characters. */
final class ByteLevelPreTokenizer implements PreTokenizer {
    private static final TextPattern GPT2 = TextPattern.regex(
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", "ByteLevel");

    private final boolean addPrefixSpace;
    private final boolean useRegex;

    ByteLevelPreTokenizer(boolean addPrefixSpace, boolean useRegex) {
        this.addPrefixSpace = addPrefixSpace;
        this.useRegex = useRegex;
    }

    @Override
    public void split(Piece piece, List<Piece> out) {
        String text = piece.text();
        if (addPrefixSpace && !text.startsWith(" ")) {
            text = " " + text;
        }
        List<Piece> parts = new ArrayList<>();
        if (useRegex) {
            new PatternPreTokenizer(GPT2, SplitBehavior.ISOLATED, false).split(new Piece(text, piece.atOrigin()), parts);
        } else if (!text.isEmpty()) {
            parts.add(new Piece(text, piece.atOrigin()));
        }
        for (Piece part : parts) {
            out.add(new Piece(ByteLevelAlphabet.encode(part.text()), part.atOrigin()));
        }
    }
}
