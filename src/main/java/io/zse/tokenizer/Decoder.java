package io.zse.tokenizer;

import java.util.List;

/** Turns token strings back into text, one chain step at a time (Hugging Face "decoder"; its decode_chain). */
interface Decoder {
    List<String> decodeChain(List<String> tokens);
}
