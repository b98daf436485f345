package io.zse.tokenizer;

import java.util.List;

/** Removes up to {@code start} leading and {@code stop} trailing {@code content} characters from every token. */
record StripDecoder(int content, int start, int stop) implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        return tokens.stream().map(this::strip).toList();
    }

    private String strip(String token) {
        int[] chars = token.codePoints().toArray();
        int from = 0;
        for (int i = 0; i < Math.min(start, chars.length) && chars[i] == content; i++) {
            from = i + 1;
        }
        int to = chars.length;
        for (int i = 0; i < stop && chars.length - i - 1 >= 0 && chars[chars.length - i - 1] == content; i++) {
            to = chars.length - i - 1;
        }
        return from >= to ? "" : new String(chars, from, to - from);
    }
}
