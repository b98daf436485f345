package io.zse.convert.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import java.util.function.LongUnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ggml blocks written by llama-quantize, decoded by {@link GgmlBlockDecoder}, against the gguf package's dequantize
 * (golden/ggml-blocks.json, made by tools/reference/ggml_blocks.py): every value equal.
 */
class GgmlBlockDecoderTest {
    @Test
    void everyTypeDecodesToTheGgufPackagesValues() throws IOException {
        JsonNode golden;
        try (InputStream in = getClass().getResourceAsStream("/golden/ggml-blocks.json")) {
            golden = new ObjectMapper().readTree(in);
        }
        int elements = golden.get("elements").asInt();
        assertEquals(12, golden.get("cases").size());
        for (JsonNode c : golden.get("cases")) {
            GgmlType type = GgmlType.valueOf(c.get("type").asText());
            MemorySegment bytes = MemorySegment.ofArray(HexFormat.of().parseHex(c.get("bytes").asText()));
            assertEquals(type.bytesFor(elements), bytes.byteSize(), type.toString());
            float[] decoded = new float[elements];
            GgmlBlockDecoder.decode(type, bytes, 0, elements, decoded, 0);
            // also from an offset, one block at a time (the converter decodes rows)
            float[] second = new float[elements];
            int block = type.blockSize() == 1 ? 32 : type.blockSize();
            for (int at = 0; at < elements; at += block) {
                GgmlBlockDecoder.decode(type, bytes, at, block, second, at);
            }
            for (int i = 0; i < elements; i++) {
                float want = (float) c.get("values").get(i).asDouble();
                assertTrue(want == decoded[i] && want == second[i], type + " element " + i + ": " + decoded[i] + " vs " + want);
            }
        }
    }

    @Test
    void llamaQkRowsAreReadBackInHuggingFaceOrder() {
        // head_dim 8: Hugging Face rows (0..3 | 4..7) of a head are stored by llama.cpp as pairs 0,4,1,5,2,6,3,7.
        LongUnaryOperator source = GgufConverter.unpermute(8);
        long[] gguf = new long[16];
        for (int hfRow = 0; hfRow < 16; hfRow++) {
            gguf[hfRow] = source.applyAsLong(hfRow);
        }
        assertEquals("[0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15]", java.util.Arrays.toString(gguf));
    }
}
