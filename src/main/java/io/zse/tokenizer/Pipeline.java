package io.zse.tokenizer;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The text-processing stages around the model, each null when the file has none, plus the JSON they were read from
 * (kept so the binary form can store it).
 */
record Pipeline(Normalizer normalizer, PreTokenizer preTokenizer, PostProcessor postProcessor, Decoder decoder,
                ObjectNode source) {

    /** Whether decoding merges runs of byte tokens, so a byte token's text depends on what follows it. */
    boolean decodesByteRuns() {
        return contains(decoder);
    }

    private static boolean contains(Decoder decoder) {
        if (decoder instanceof ByteFallbackDecoder) {
            return true;
        }
        return decoder instanceof SequenceDecoder sequence && sequence.steps().stream().anyMatch(Pipeline::contains);
    }
}
