package io.zse.convert.gguf;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Damaged BitNet GGUF files (tools/reference/bitnet_gguf_fixtures.py's TQ2_0 and TQ1_0 files with bytes changed): a
 * truncated or mis-sized ternary tensor, blocks whose scales or codes are not one BitNet weight's, a bad .scale
 * tensor, a ternary type outside the projections, bitnet.cpp's I2_S and llama.cpp's SiLU "bitnet" are each one
 * {@link io.zse.convert.ImportFormatException} naming what is wrong.
 */
class TernaryGgufBadInputTest {
    private static final String Q = "blk.0.attn_q.weight";

    @TempDir
    static Path dir;
    static byte[] tq2;
    static byte[] tq1;
    static long qOffset;
    static long qScaleOffset;

    @BeforeAll
    static void read() throws IOException {
        Path tq2Path = GgufFixtures.gguf("tiny-bitnet-tq2_0", dir);
        Path tq1Path = GgufFixtures.gguf("tiny-bitnet-tq1_0", dir);
        tq2 = Files.readAllBytes(tq2Path);
        tq1 = Files.readAllBytes(tq1Path);
        try (GgufFile file = GgufFile.open(tq2Path)) {
            qOffset = file.tensors().stream().filter(t -> t.name().equals(Q)).findFirst().orElseThrow().offset();
        }
        try (GgufFile file = GgufFile.open(tq1Path)) {
            qScaleOffset = file.tensors().stream().filter(t -> t.name().equals("blk.0.attn_q.scale")).findFirst()
                    .orElseThrow().offset();
        }
    }

    static String failure(byte[] bytes, String label) throws IOException {
        return GgufBadInputTest.failure(dir, bytes, label);
    }

    /** Offset of the field {@code skip} bytes after the end of tensor {@code name}'s name in the tensor table. */
    static int tensorField(byte[] file, String name, int skip) {
        return GgufBadInputTest.find(file, name) + name.length() + skip;
    }

    static byte[] with(byte[] original, long at, int value, int width) {
        byte[] copy = original.clone();
        ByteBuffer b = ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN);
        switch (width) {
            case 1 -> copy[(int) at] = (byte) value;
            case 2 -> b.putShort((int) at, (short) value);
            default -> b.putInt((int) at, value);
        }
        return copy;
    }

    @Test
    void truncatedTernaryDataIsNamed() throws IOException {
        String message = failure(Arrays.copyOf(tq2, (int) qOffset + 100), "cut-q");
        assertTrue(message.contains("past the end"), message);
    }

    @Test
    void rowsThatAreNotWholeTernaryBlocksAreRefused() throws IOException {
        // blk.0.attn_q.weight: n_dims u32, then ne0 (the row length, 256) as u64
        String message = failure(with(tq2, tensorField(tq2, Q, 4), 128, 4), "rows128");
        assertTrue(message.contains("rows of 128 elements are not whole TQ2_0 blocks of 256"), message);
    }

    @Test
    void blocksThatAreNotOneBitNetWeightAreRefused() throws IOException {
        // block 1's d (F16 at byte 64 of the 66-byte block) set to 1.0 beside the others' float16(s)
        String scales = failure(with(tq2, qOffset + 66 + 64, Float.floatToFloat16(1f), 2), "d");
        assertTrue(scales.contains("'" + Q + "' (TQ2_0) holds") && scales.contains("one s per tensor"), scales);
        // code 3 (value 2d) in block 0's first byte
        String code = failure(with(tq2, qOffset, 0xFF, 1), "code3");
        assertTrue(code.contains("'" + Q + "' (TQ2_0) holds") && code.contains("at row 0, column "), code);
    }

    @Test
    void aBadScaleTensorIsRefused() throws IOException {
        String negative = failure(with(tq1, qScaleOffset, Float.floatToIntBits(-0.5f), 4), "scale");
        assertTrue(negative.contains("'blk.0.attn_q.scale' is -0.5, not a positive scale"), negative);
        // the scale's type becomes F16: not one F32 value
        String type = failure(with(tq1, tensorField(tq1, "blk.0.attn_q.scale", 4 + 8), GgmlType.F16.id(), 4),
                "scale-f16");
        assertTrue(type.contains("'blk.0.attn_q.scale' is not one F32 value"), type);
    }

    @Test
    void ternaryTypesOutsideTheProjectionsAndI2sAreNamed() throws IOException {
        // blk.0.attn_norm.weight (F32 [256]) claims TQ2_0: its 66 bytes lie inside its 1024
        String norm = failure(with(tq2, tensorField(tq2, "blk.0.attn_norm.weight", 4 + 8), GgmlType.TQ2_0.id(), 4),
                "norm-tq2");
        assertTrue(norm.contains("'blk.0.attn_norm.weight' has type TQ2_0: ternary types are imported only for the "
                + "projections"), norm);
        String i2s = failure(with(tq2, tensorField(tq2, Q, 4 + 16), 36, 4), "i2s");
        assertTrue(i2s.contains("unknown tensor type id 36 (bitnet.cpp's I2_S"), i2s);
    }

    @Test
    void llamaCppsSiluBitnetIsRefusedByName() throws IOException {
        // general.architecture "bitnet-b1.58" (u64 length 12) becomes "bitnet": 6 bytes fewer in the header, 6 more
        // zeros in the padding before the (32-byte aligned) tensor data, which stays where it was
        int value = GgufBadInputTest.find(tq2, "general.architecture") + "general.architecture".length() + 4;
        assertEquals("bitnet-b1.58", new String(tq2, value + 8, 12, StandardCharsets.UTF_8));
        int tableEnd = tensorField(tq2, "output_norm.weight", 4 + 8 + 4 + 8);
        assertTrue(tableEnd % 32 == 0 || tableEnd % 32 > 6, "the padding absorbs the shift");
        byte[] bitnet = tq2.clone();
        System.arraycopy(tq2, value + 8 + 12, bitnet, value + 8 + 6, tableEnd - (value + 8 + 12));
        Arrays.fill(bitnet, tableEnd - 6, tableEnd, (byte) 0);
        ByteBuffer.wrap(bitnet).order(ByteOrder.LITTLE_ENDIAN).putLong(value, 6);
        String message = failure(bitnet, "bitnet");
        assertTrue(message.contains("GGUF architecture 'bitnet' is llama.cpp's BitnetForCausalLM (1bitLLM), whose "
                + "feed-forward gates with SiLU"), message);
    }
}
