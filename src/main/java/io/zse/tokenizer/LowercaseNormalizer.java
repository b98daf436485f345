package io.zse.tokenizer;

import java.util.Locale;

/** Lowercases code point by code point, without context (no final-sigma rule), as Rust's char::to_lowercase. */
final class LowercaseNormalizer implements Normalizer {
    @Override
    public String normalize(String text) {
        StringBuilder out = new StringBuilder(text.length());
        text.codePoints().forEach(cp -> {
            if (cp < 0x80 || Character.isSupplementaryCodePoint(cp)) {
                out.appendCodePoint(Character.toLowerCase(cp));
            } else {
                // full mappings such as U+0130 -> "i\u0307" need String.toLowerCase; one char at a time avoids context
                out.append(String.valueOf((char) cp).toLowerCase(Locale.ROOT));
            }
        });
        return out.toString();
    }
}
