package io.zse.tokenizer;

import java.util.List;

/** Cuts a piece of normalized text into the words the model sees (Hugging Face "pre_tokenizer"). */
interface PreTokenizer {
    /** Appends the pieces {@code piece} becomes to {@code out}; empty pieces are never appended. */
    void split(Piece piece, List<Piece> out);
}
