package io.zse.tokenizer;

import java.util.List;

/** Applies normalizers in order. */
record SequenceNormalizer(List<Normalizer> steps) implements Normalizer {
    @Override
    public boolean keepsStart(String text) {
        for (Normalizer step : steps) {
            if (!step.keepsStart(text)) {
                return false;
            }
            text = step.normalize(text);
        }
        return true;
    }

    @Override
    public String normalize(String text) {
        for (Normalizer step : steps) {
            text = step.normalize(text);
        }
        return text;
    }
}
