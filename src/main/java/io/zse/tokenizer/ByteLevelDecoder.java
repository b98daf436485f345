package io.zse.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Maps alphabet characters back to bytes and decodes the whole run as UTF-8, invalid bytes becoming U+FFFD. */
final class ByteLevelDecoder implements Decoder {
    @Override
    public List<String> decodeChain(List<String> tokens) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (String token : tokens) {
            byte[] mapped = new byte[token.length()];
            boolean allMapped = true;
            for (int i = 0; i < token.length() && allMapped; i++) {
                int b = ByteLevelAlphabet.byteOf(token.charAt(i));
                allMapped = b >= 0;
                mapped[i] = (byte) b;
            }
            // a token with characters outside the alphabet (an added token, say) stands for its own UTF-8 bytes
            bytes.writeBytes(allMapped ? mapped : token.getBytes(StandardCharsets.UTF_8));
        }
        return List.of(new String(bytes.toByteArray(), StandardCharsets.UTF_8));
    }
}
