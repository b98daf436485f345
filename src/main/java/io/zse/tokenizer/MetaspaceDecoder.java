package io.zse.tokenizer;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns the replacement character back into spaces; in the first token Hugging Face drops every replacement
 * character instead (unless the prepend scheme is "never").
 */
record MetaspaceDecoder(int replacement, PrependScheme prependScheme) implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        List<String> out = new ArrayList<>(tokens.size());
        for (int i = 0; i < tokens.size(); i++) {
            boolean drop = i == 0 && prependScheme != PrependScheme.NEVER;
            StringBuilder sb = new StringBuilder();
            tokens.get(i).codePoints().forEach(c -> {
                if (c != replacement) {
                    sb.appendCodePoint(c);
                } else if (!drop) {
                    sb.append(' ');
                }
            });
            out.add(sb.toString());
        }
        return out;
    }
}
