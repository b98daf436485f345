package io.zse.tokenizer;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Joins runs of {@code <0xNN>} tokens into text; a run that is not valid UTF-8 as a whole becomes one U+FFFD per
 * byte, exactly as Hugging Face does.
 */
final class ByteFallbackDecoder implements Decoder {

    /** The byte a {@code <0xNN>} token stands for, or -1. */
    static int byteOf(String token) {
        if (token.length() != 6 || !token.startsWith("<0x") || token.charAt(5) != '>') {
            return -1;
        }
        int hi = Character.digit(token.charAt(3), 16);
        int lo = Character.digit(token.charAt(4), 16);
        return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
    }

    @Override
    public List<String> decodeChain(List<String> tokens) {
        List<String> out = new ArrayList<>(tokens.size());
        byte[] run = new byte[tokens.size()];
        int runLength = 0;
        for (String token : tokens) {
            int b = byteOf(token);
            if (b >= 0) {
                run[runLength++] = (byte) b;
                continue;
            }
            flush(run, runLength, out);
            runLength = 0;
            out.add(token);
        }
        flush(run, runLength, out);
        return out;
    }

    private static void flush(byte[] run, int length, List<String> out) {
        if (length == 0) {
            return;
        }
        try {
            out.add(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(run, 0, length)).toString());
        } catch (CharacterCodingException e) {
            for (int i = 0; i < length; i++) {
                out.add("\uFFFD");
            }
        }
    }
}
