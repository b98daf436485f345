package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.List;

/** Applies pre-tokenizers in order, each to every piece the previous one produced. */
record SequencePreTokenizer(List<PreTokenizer> steps) implements PreTokenizer {
    @Override
    public void split(Piece piece, List<Piece> out) {
        List<Piece> current = List.of(piece);
        for (PreTokenizer step : steps) {
            List<Piece> next = new ArrayList<>();
            for (Piece p : current) {
                step.split(p, next);
            }
            current = next;
        }
        out.addAll(current);
    }
}
