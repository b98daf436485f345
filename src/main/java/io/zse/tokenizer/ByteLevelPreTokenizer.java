package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.List;

/** Optionally adds a leading space and splits with the GPT-2 regex, then rewrites bytes as alphabet characters. */
final class ByteLevelPreTokenizer implements PreTokenizer {
    private static final PatternPreTokenizer GPT2 = new PatternPreTokenizer(TextPattern.regex(
            "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", "ByteLevel"),
            SplitBehavior.ISOLATED, false);

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
            GPT2.split(new Piece(text, piece.atOrigin()), parts);
        } else if (!text.isEmpty()) {
            parts.add(new Piece(text, piece.atOrigin()));
        }
        for (Piece part : parts) {
            out.add(new Piece(ByteLevelAlphabet.encode(part.text()), part.atOrigin()));
        }
    }
}
