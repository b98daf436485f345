package io.zse.tokenizer;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.SmallJsonParser;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The precompiled form of a tokenizer: the small JSON settings as they were, then the vocabulary as one UTF-8 blob
 * with lengths, then the merges already resolved to ids. Loading it skips JSON parsing of the big tables and the
 * string lookups of every merge.
 *
 * <pre>
 * "ZSETOK01"  int settingsLength  settings JSON (UTF-8)
 * int tokenCount  int[tokenCount] byteLength (-1 = unused id)  token bytes
 * int mergeCount  int[mergeCount] left  int[mergeCount] right  int[mergeCount] merged
 * </pre>
 * All ints little-endian.
 */
final class TokenizerBinaryFormat {
    private static final byte[] MAGIC = "ZSETOK01".getBytes(StandardCharsets.US_ASCII);

    private TokenizerBinaryFormat() {
    }

    static byte[] write(Tokenizer tokenizer) {
        byte[] settings = tokenizer.pipeline().source().toString().getBytes(StandardCharsets.UTF_8);
        String[] tokens = tokenizer.model().vocab().tokens();
        byte[][] encoded = new byte[tokens.length][];
        int tokenBytes = 0;
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] != null) {
                encoded[i] = tokens[i].getBytes(StandardCharsets.UTF_8);
                tokenBytes += encoded[i].length;
            }
        }
        int[][] merges = tokenizer.model().merges().ranked();
        int mergeCount = merges[0].length;
        ByteBuffer out = ByteBuffer.allocate(MAGIC.length + 4 + settings.length + 4 + 4 * tokens.length + tokenBytes
                + 4 + 12 * mergeCount).order(ByteOrder.LITTLE_ENDIAN);
        out.put(MAGIC).putInt(settings.length).put(settings).putInt(tokens.length);
        for (byte[] token : encoded) {
            out.putInt(token == null ? -1 : token.length);
        }
        for (byte[] token : encoded) {
            if (token != null) {
                out.put(token);
            }
        }
        out.putInt(mergeCount);
        for (int[] column : merges) {
            out.asIntBuffer().put(column);
            out.position(out.position() + 4 * mergeCount);
        }
        return out.array();
    }

    static Tokenizer read(byte[] binary) {
        ByteBuffer in = ByteBuffer.wrap(binary).order(ByteOrder.LITTLE_ENDIAN);
        try {
            byte[] magic = new byte[MAGIC.length];
            in.get(magic);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new IllegalArgumentException("not a precompiled tokenizer (bad magic)");
            }
            int settingsLength = in.getInt();
            ObjectNode settings = (ObjectNode) SmallJsonParser.parse(binary, in.position(), settingsLength,
                    "precompiled tokenizer settings");
            in.position(in.position() + settingsLength);
            int tokenCount = in.getInt();
            if (tokenCount < 0 || tokenCount > in.remaining() / 4) {
                throw new IllegalArgumentException("corrupt precompiled tokenizer: " + tokenCount + " tokens in "
                        + in.remaining() + " bytes");
            }
            String[] tokens = new String[tokenCount];
            int[] lengths = new int[tokens.length];
            in.asIntBuffer().get(lengths);
            in.position(in.position() + 4 * tokens.length);
            for (int i = 0; i < tokens.length; i++) {
                if (lengths[i] >= 0) {
                    tokens[i] = new String(binary, in.position(), lengths[i], StandardCharsets.UTF_8);
                    in.position(in.position() + lengths[i]);
                }
            }
            int mergeCount = in.getInt();
            if (mergeCount < 0 || mergeCount > in.remaining() / 12) {
                throw new IllegalArgumentException("corrupt precompiled tokenizer: " + mergeCount + " merges in "
                        + in.remaining() + " bytes");
            }
            int[][] merges = new int[3][mergeCount];
            for (int[] column : merges) {
                in.asIntBuffer().get(column);
                in.position(in.position() + 4 * mergeCount);
            }
            return TokenizerAssembler.assemble(settings, new Vocabulary(tokens), merges);
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw new IllegalArgumentException("corrupt precompiled tokenizer: " + e, e);
        }
    }
}
