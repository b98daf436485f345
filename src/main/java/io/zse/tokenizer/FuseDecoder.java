package io.zse.tokenizer;

import java.util.List;

/** Concatenates all tokens into one. */
final class FuseDecoder implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        return List.of(String.join("", tokens));
    }
}
