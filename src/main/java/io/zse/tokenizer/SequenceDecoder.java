package io.zse.tokenizer;

import java.util.List;

/** Applies decoders in order. */
record SequenceDecoder(List<Decoder> steps) implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        for (Decoder step : steps) {
            tokens = step.decodeChain(tokens);
        }
        return tokens;
    }
}
