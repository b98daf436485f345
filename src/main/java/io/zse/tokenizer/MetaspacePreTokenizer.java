package io.zse.tokenizer;

import java.util.List;

/** SentencePiece-style: spaces become the replacement character, which optionally starts and splits words. */
final class MetaspacePreTokenizer implements PreTokenizer {
    private final String replacement;
    private final PrependScheme prependScheme;
    private final boolean split;
    private final PatternPreTokenizer splitter;

    MetaspacePreTokenizer(String replacement, PrependScheme prependScheme, boolean split) {
        this.replacement = replacement;
        this.prependScheme = prependScheme;
        this.split = split;
        this.splitter = new PatternPreTokenizer(TextPattern.literal(replacement), SplitBehavior.MERGED_WITH_NEXT, false);
    }

    @Override
    public void split(Piece piece, List<Piece> out) {
        String text = piece.text().replace(" ", replacement);
        boolean prepend = switch (prependScheme) {
            case ALWAYS -> true;
            case FIRST -> piece.atOrigin();
            case NEVER -> false;
        };
        if (prepend && !text.startsWith(replacement)) {
            text = replacement + text;
        }
        Piece replaced = new Piece(text, piece.atOrigin());
        if (split) {
            splitter.split(replaced, out);
        } else if (!text.isEmpty()) {
            out.add(replaced);
        }
    }
}
