package io.zse.convert.gguf;

import io.zse.convert.ImportFormatException;
import io.zse.convert.ModelConverter;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Damaged and lying GGUF files (a real llama.cpp file with bytes changed where the format puts counts, lengths, types
 * and offsets, or written by {@link GgufFixture} where no byte patch makes the file): each is one
 * {@link ImportFormatException} naming the file and what is wrong, never another exception, a crash, or an allocation
 * of what the file claims.
 */
class GgufBadInputTest {
    @TempDir
    static Path dir;
    static byte[] original;

    @BeforeAll
    static void read() throws IOException {
        original = Files.readAllBytes(GgufFixtures.gguf("tinystories-656k-q4_0", dir));
    }

    /** Converts {@code bytes}; returns the message of the ImportFormatException it must fail with. */
    static String failure(byte[] bytes, String label) throws IOException {
        return failure(dir, bytes, label);
    }

    /** {@link #failure(byte[], String)} with the files in {@code dir}. */
    static String failure(Path dir, byte[] bytes, String label) throws IOException {
        Path file = dir.resolve("bad-" + label + ".gguf");
        Files.write(file, bytes);
        Path out = dir.resolve("bad-" + label + ".zse");
        try {
            GgufConverter.convert(file, out, true, ModelConverter.Progress.NONE);
        } catch (ImportFormatException e) {
            assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
            assertFalse(Files.exists(out), "no output is left behind");
            return e.getMessage();
        } catch (RuntimeException | IOException e) {
            throw new AssertionError(label + ": expected an ImportFormatException, got " + e, e);
        }
        return fail(label + ": converted without an error");
    }

    static int find(byte[] haystack, String text) {
        byte[] needle = text.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError(text + " not found");
    }

    static byte[] with(long value, int at, int width) {
        byte[] copy = original.clone();
        ByteBuffer b = ByteBuffer.wrap(copy).order(ByteOrder.LITTLE_ENDIAN);
        if (width == 4) {
            b.putInt(at, (int) value);
        } else {
            b.putLong(at, value);
        }
        return copy;
    }

    /** Offset of the field {@code skip} bytes after the end of tensor {@code name}'s name in the tensor table. */
    static int tensorField(String name, int skip) {
        return find(original, name) + name.length() + skip;
    }

    @Test
    void everyTruncationIsOneClearError() throws IOException {
        int[] cuts = {0, 3, 4, 8, 20, 23, 40, 100, 1000, 5000, 40_000, 90_000, original.length / 2, original.length - 1};
        for (int cut : cuts) {
            String message = failure(Arrays.copyOf(original, cut), "cut" + cut);
            assertTrue(message.contains("truncated") || message.contains("too short") || message.contains("past the end")
                    || message.contains("cannot fit") || message.contains("exceeds"), cut + ": " + message);
        }
    }

    @Test
    void unknownAndUnsupportedTensorTypesAreNamed() throws IOException {
        // blk.0.ffn_down.weight: name, n_dims u32 (2), two u64 dims, then the type u32
        int type = tensorField("blk.0.ffn_down.weight", 4 + 16);
        assertTrue(failure(with(99, type, 4), "type99").contains("unknown tensor type id 99"));
        String iq = failure(with(GgmlType.IQ2_XXS.id(), type, 4), "iq2");
        assertTrue(iq.contains("rows of 384 elements are not whole IQ2_XXS blocks")
                || iq.contains("type IQ2_XXS, which zse cannot import"), iq);
        String q2k = failure(with(GgmlType.Q2_K.id(), type, 4), "q2k");
        assertTrue(q2k.contains("Q2_K"), q2k);
    }

    @Test
    void lyingCountsAndLengthsAreRefusedBeforeAllocating() throws IOException {
        // header: magic, version u32, tensor count u64 @8, metadata count u64 @16
        assertTrue(failure(with(1L << 40, 8, 8), "tensors").contains("tensor count 1099511627776 cannot fit"));
        assertTrue(failure(with(Long.MAX_VALUE, 16, 8), "keys").contains("metadata key count"));
        // tokenizer.ggml.tokens: key, value type u32 (9 = array), element type u32 (8 = string), count u64
        int tokens = find(original, "tokenizer.ggml.tokens") + "tokenizer.ggml.tokens".length() + 8;
        assertTrue(failure(with(1L << 40, tokens, 8), "tokens").contains("array length 1099511627776 cannot fit"));
        assertTrue(failure(with(-1L, tokens, 8), "tokens-negative").contains("cannot fit"));
        // first token string length u64 right after the count
        assertTrue(failure(with(1L << 50, tokens + 8, 8), "string").contains("string length"));
        // a key's own length
        int key = find(original, "general.architecture") - 8;
        assertTrue(failure(with(1L << 33, key, 8), "key").contains("string length"));
    }

    @Test
    void lyingShapesOffsetsAndHeadersAreRefused() throws IOException {
        int dims = tensorField("blk.0.ffn_down.weight", 0);
        assertTrue(failure(with(9, dims, 4), "rank").contains("has 9 dimensions"));
        assertTrue(failure(with(1L << 40, dims + 4 + 8, 8), "dim").contains("impossible for a file"));
        int offset = tensorField("blk.0.ffn_down.weight", 4 + 16 + 4);
        assertTrue(failure(with(1L << 30, offset, 8), "offset").contains("extends past the end"));
        assertTrue(failure(with(33, offset, 8), "misaligned").contains("not a multiple of the alignment"));
        assertTrue(failure(with(1, 4, 4), "v1").contains("GGUF version 1"));
        assertTrue(failure(with(Integer.reverseBytes(3), 4, 4), "big-endian").contains("big-endian"));
        assertTrue(failure(with(0x46554746, 0, 4), "magic").contains("not a GGUF file"));
        // blk.0.ffn_down.weight claims half its rows: the metadata no longer describes it
        String shape = failure(with(64, dims + 4 + 8, 8), "shape");
        assertTrue(shape.contains("blk.0.ffn_down.weight") && shape.contains("implies"), shape);
    }

    @Test
    void lyingHyperparametersAreNamed() throws IOException {
        int heads = find(original, "llama.attention.head_count_kv") + "llama.attention.head_count_kv".length() + 4;
        String message = failure(with(3, heads, 4), "kvheads");
        assertTrue(message.contains("head_count_kv 3 does not divide head_count 8"), message);
        int vocab = find(original, "llama.vocab_size") + "llama.vocab_size".length() + 4;
        assertTrue(failure(with(4096, vocab, 4), "vocab").contains("vocab_size 4096 differs"));
        // 128 heads of the 128-wide stream: heads of 1 dimension, whose halves llama.cpp's row order cannot have
        int headCount = find(original, "llama.attention.head_count\u0004") + "llama.attention.head_count".length() + 4;
        String odd = failure(with(128, headCount, 4), "odd-heads");
        assertTrue(odd.contains("heads of 1 dimensions: a head dim must be even"), odd);
    }

    /**
     * blk.0 and blk.00 are one layer to the name map, so a file holding blk.00.attn_q.weight beside blk.0.attn_q.weight
     * is refused by both names; the same file written without it converts, so the refusal is the duplicate's.
     */
    @Test
    void twoTensorsForOneWeightAreRefusedByBothNames() throws IOException {
        GgufFixture copy;
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf("tinystories-656k-q4_0", dir))) {
            copy = GgufFixture.copyOf(file);
            GgufFile.GgufTensor q = file.tensors().stream().filter(t -> t.name().equals("blk.0.attn_q.weight"))
                    .findFirst().orElseThrow();
            Path written = dir.resolve("copy.gguf");
            Files.write(written, copy.bytes());
            GgufConverter.convert(written, dir.resolve("copy.zse"), true, ModelConverter.Progress.NONE);
            copy.tensor("blk.00.attn_q.weight", q.type(), q.dims(), file.bytes(q).toArray(ValueLayout.JAVA_BYTE));
        }
        String message = failure(copy.bytes(), "blk00");
        assertTrue(message.contains("tensors 'blk.0.attn_q.weight' and 'blk.00.attn_q.weight' are both "
                + "model.layers.0.self_attn.q_proj.weight"), message);
    }

    /** The fixture file as {@link GgufFixture} writes it back, with metadata {@code key} set to {@code value}. */
    static byte[] rewrittenWith(String key, Object value) throws IOException {
        try (GgufFile file = GgufFile.open(GgufFixtures.gguf("tinystories-656k-q4_0", dir))) {
            return GgufFixture.copyOf(file).put(key, value).bytes();
        }
    }

    /**
     * A RoPE base must be finite and above 1, a norm epsilon above 0 and below 1: else refused by its key, showing the
     * f32 as its shortest decimal, the value the reader takes.
     */
    @Test
    void ropeBaseAndNormEpsilonOutOfRangeAreRefusedByKey() throws IOException {
        String base = "llama.rope.freq_base";
        for (float bad : new float[]{0, -10000, 1, Float.NaN, Float.POSITIVE_INFINITY}) {
            String message = failure(rewrittenWith(base, bad), "freq-base");
            assertTrue(message.endsWith("GGUF metadata '" + base + "' is " + bad
                    + ", expected a finite RoPE base above 1"), message);
        }
        String eps = "llama.attention.layer_norm_rms_epsilon";
        for (float bad : new float[]{0, -1e-5f, 1, Float.NaN}) {
            String message = failure(rewrittenWith(eps, bad), "epsilon");
            assertTrue(message.endsWith("GGUF metadata '" + eps + "' is " + bad
                    + ", expected a norm epsilon above 0 and below 1"), message);
        }
    }

    /**
     * All arrays of a file share one budget of 2^24 elements (each boxed): an array just under it is read, and a
     * second array of 16 elements, itself far under it, is refused by its key with the count before it.
     */
    @Test
    void arraysPastTheirSharedBudgetAreRefused() throws IOException {
        int budget = 1 << 24;
        byte[] file = new GgufFixture().put("general.architecture", "llama")
                .put("zse.test.first", new byte[budget - 8]).put("zse.test.second", new byte[16]).bytes();
        String message = failure(file, "array-budget");
        assertTrue(message.contains("metadata key 'zse.test.second': array length 16 exceeds the limit of " + budget
                + " for all arrays together, " + (budget - 8) + " before it"), message);
    }

    @Test
    void otherArchitecturesAreRefusedByName() throws IOException {
        byte[] phi3 = Files.readAllBytes(GgufFixtures.gguf("tiny-phi3-f32", dir));
        int arch = find(phi3, "general.architecture") + "general.architecture".length() + 4 + 8;
        byte[] phi2 = phi3.clone();
        phi2[arch + 3] = '2';
        assertTrue(new String(phi3, arch, 4, StandardCharsets.UTF_8).equals("phi3"));
        String message = failure(phi2, "phi2");
        assertTrue(message.contains("GGUF architecture 'phi2' is not supported (supported: bitnet-b1.58, gemma2, gemma3, "
                + "llama, phi3, qwen2, qwen3)"), message);
    }
}
