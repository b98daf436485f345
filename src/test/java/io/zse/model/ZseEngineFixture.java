package io.zse.model;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * Writes small files in the Python ZSE engine's format (docs: ../shared/zse-engine), from values tests choose: a
 * one-layer Llama of F16 tensors whose index, tokenizer or data a test can make wrong in one place.
 */
final class ZseEngineFixture {
    private ZseEngineFixture() {
    }

    /** CONFIG of a one-layer Llama: hidden 8, 2 heads, feed-forward 4, vocabulary 4, embeddings tied. */
    static Map<String, Object> config() {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("arch", "llama");
        c.put("hidden_size", 8L);
        c.put("num_heads", 2L);
        c.put("num_kv_heads", 2L);
        c.put("num_layers", 1L);
        c.put("intermediate_size", 4L);
        c.put("vocab_size", 4L);
        c.put("max_seq_len", 16L);
        c.put("rope_theta", 10000.0);
        c.put("rms_norm_eps", 1e-5);
        c.put("tie_word_embeddings", true);
        return c;
    }

    /** TOKENIZER of four byte-level tokens, with a BOS id where {@code bos} is set and the EOS id 1. */
    static Map<String, Object> tokenizer(boolean bos) {
        Map<String, Object> vocab = new LinkedHashMap<>();
        String[] tokens = {"a", "b", "c", "d"};
        for (int i = 0; i < tokens.length; i++) {
            vocab.put(tokens[i], (long) i);
        }
        Map<String, Object> special = new LinkedHashMap<>();
        if (bos) {
            special.put("bos_id", 0L);
        }
        special.put("eos_id", 1L);
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("vocab", vocab);
        t.put("merges", List.of());
        t.put("special_tokens", special);
        return t;
    }

    /** WEIGHT_INDEX entries of every tensor of {@link #config()} as F16, one after another from offset 0. */
    static List<Map<String, Object>> index() {
        ModelConfig mc = new ModelConfig("llama", 8, 1, 2, 2, 4, 4, 4, 16, 10000, null, 1e-5, true, false, false, null,
                0, List.of(1), null);
        List<Map<String, Object>> index = new ArrayList<>();
        long at = 0;
        for (Map.Entry<String, long[]> e : ModelTensors.expected(mc).entrySet()) {
            long n = 1;
            List<Object> shape = new ArrayList<>();
            for (long d : e.getValue()) {
                n *= d;
                shape.add(d);
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", e.getKey().startsWith("model.") ? e.getKey().substring("model.".length()) : e.getKey());
            m.put("shape", shape);
            m.put("dtype", "float16");
            m.put("group_size", 1L);
            m.put("data_offset", at);
            m.put("data_nbytes", 2 * n);
            for (String key : new String[]{"scale_offset", "scale_nbytes", "zeros_offset", "zeros_nbytes"}) {
                m.put(key, 0L);
            }
            index.add(m);
            at += 2 * n;
        }
        return index;
    }

    /** Writes the file: CONFIG, WEIGHT_INDEX, WEIGHT_DATA (F16 0.5 in every element), then TOKENIZER. */
    static void write(Path path, Map<String, Object> config, List<Map<String, Object>> index,
                      Map<String, Object> tokenizer) throws IOException {
        long dataBytes = 0;
        for (Map<String, Object> m : index) {
            for (String part : new String[]{"data", "scale", "zeros"}) {
                dataBytes = Math.max(dataBytes, (Long) m.get(part + "_offset") + (Long) m.get(part + "_nbytes"));
            }
        }
        ByteBuffer data = ByteBuffer.allocate((int) dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        while (data.remaining() >= 2) {
            data.putShort((short) 0x3800);
        }
        List<byte[]> sections = List.of(encode(config), encode(index), data.array(), encode(tokenizer));
        int[] types = {0, 2, 3, 1};
        long offset = 64 + 32L * sections.size();
        ByteBuffer header = ByteBuffer.allocate((int) offset).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(0, 0x0145535A).putInt(4, 1).putInt(20, sections.size());
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (int i = 0; i < sections.size(); i++) {
            byte[] s = sections.get(i);
            CRC32 crc = new CRC32();
            crc.update(s);
            header.putInt(64 + 32 * i, types[i]).putLong(64 + 32 * i + 4, offset + body.size())
                    .putLong(64 + 32 * i + 12, s.length).putInt(64 + 32 * i + 20, (int) crc.getValue());
            body.writeBytes(s);
        }
        header.putLong(8, offset + body.size());
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        file.writeBytes(header.array());
        file.writeBytes(body.toByteArray());
        Files.write(path, file.toByteArray());
    }

    private static byte[] encode(Object value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        tag(out, value);
        return out.toByteArray();
    }

    private static void tag(ByteArrayOutputStream out, Object v) {
        switch (v) {
            case null -> out.write(0);
            case Boolean b -> out.write(b ? 2 : 1);
            case Long l -> {
                out.write(0x10);
                out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(l).array());
            }
            case Double d -> {
                out.write(0x11);
                out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble(d).array());
            }
            case String s -> {
                byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                out.write(0x21);
                out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(b.length).array());
                out.writeBytes(b);
            }
            case List<?> list -> {
                out.write(0x30);
                out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(list.size()).array());
                list.forEach(x -> tag(out, x));
            }
            case Map<?, ?> map -> {
                out.write(0x40);
                out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(map.size()).array());
                map.forEach((k, x) -> {
                    tag(out, k);
                    tag(out, x);
                });
            }
            default -> throw new IllegalArgumentException("no tag for " + v);
        }
    }
}
