package io.zse.tokenizer;

import java.nio.charset.StandardCharsets;

/** GPT-2's reversible mapping of the 256 byte values onto printable characters. */
final class ByteLevelAlphabet {
    private static final char[] BYTE_TO_CHAR = new char[256];
    private static final int[] CHAR_TO_BYTE = new int[324];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, -1);
        int next = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + next++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = b;
        }
    }

    private ByteLevelAlphabet() {
    }

    /** The UTF-8 bytes of {@code text}, each written as its alphabet character. */
    static String encode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        char[] chars = new char[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            chars[i] = BYTE_TO_CHAR[bytes[i] & 0xFF];
        }
        return new String(chars);
    }

    /** The byte a character stands for, or -1 when it is not in the alphabet. */
    static int byteOf(char c) {
        return c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
    }
}
