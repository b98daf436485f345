package io.zse.convert.zseengine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.convert.ChunkEncoder;
import io.zse.convert.ImportFormatException;
import io.zse.convert.ModelConverter;
import io.zse.convert.gguf.GgufFile;
import io.zse.convert.gguf.GgufTokenizer;
import io.zse.format.LittleEndian;
import io.zse.format.SectionKind;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseWriter;
import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import io.zse.model.RopeScaling;
import io.zse.tokenizer.Tokenizer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Converts a zse-engine {@code .zse} into one of ours. Its float16 tensors stay F16 (F32 for vectors); its int8 and
 * int4 tensors keep their bits as Q8 and Q4 wherever their groups fall inside rows (int8 groups a multiple of 32, int4
 * groups of 32, 64 or 128: the formulas are the same, only the nibble order differs); tensors whose groups cross rows
 * are decoded and re-quantized to Q8 with the added error reported. Its 64x16-tiled int4 layout is detected and undone.
 */
public final class ZseEngineConverter {
    private static final int TILE_ROWS = 64;
    private static final int TILE_BYTES = 512;

    private ZseEngineConverter() {
    }

    public static ModelConverter.Result convert(Path input, Path out, boolean force, ModelConverter.Progress progress)
            throws IOException {
        if (Files.exists(out) && !force) {
            throw new FileAlreadyExistsException(out.toString(), null, "output exists (use --force to replace it)");
        }
        try (ZseEngineFile file = ZseEngineFile.open(input)) {
            try {
                return convert(file, out, progress);
            } catch (IllegalArgumentException | ArithmeticException e) {
                throw new ImportFormatException(input, e.getMessage());
            }
        }
    }

    private record Planned(ZseEngineFile.Entry source, TensorInfo target, boolean exact, boolean tiled) {
    }

    private static ModelConverter.Result convert(ZseEngineFile file, Path out, ModelConverter.Progress progress)
            throws IOException {
        Map<String, Object> tokenizer = file.tokenizer();
        Map<String, Object> tokenizerMetadata = tokenizer == null ? null : tokenizerMetadata(tokenizer);
        ModelConfig config = config(file.config(), tokenizerMetadata);
        Map<String, ZseEngineFile.Entry> byHf = new LinkedHashMap<>();
        for (ZseEngineFile.Entry e : file.entries()) {
            String hf = e.name().equals(ModelTensors.LM_HEAD) ? e.name() : "model." + e.name();
            if (byHf.put(hf, e) != null) {
                throw new IllegalArgumentException("tensor '" + e.name() + "' appears twice");
            }
        }
        if (config.tieWordEmbeddings() && !byHf.containsKey(ModelTensors.EMBEDDINGS) && byHf.containsKey(ModelTensors.LM_HEAD)) {
            byHf.put(ModelTensors.EMBEDDINGS, byHf.remove(ModelTensors.LM_HEAD));
        }
        if (config.tieWordEmbeddings()) {
            byHf.remove(ModelTensors.LM_HEAD);
        }
        Map<String, long[]> expected = ModelTensors.expected(config);
        for (String name : byHf.keySet()) {
            if (!expected.containsKey(name)) {
                throw new IllegalArgumentException("tensor '" + byHf.get(name).name() + "' is not part of the model its "
                        + "config describes");
            }
        }
        List<Planned> plan = new ArrayList<>();
        for (Map.Entry<String, long[]> e : expected.entrySet()) {
            ZseEngineFile.Entry source = byHf.get(e.getKey());
            if (source == null) {
                throw new IllegalArgumentException("file has no tensor for " + e.getKey());
            }
            if (!Arrays.equals(source.shape(), e.getValue())) {
                throw new IllegalArgumentException("tensor '" + source.name() + "' has shape "
                        + Arrays.toString(source.shape()) + " but the config implies " + Arrays.toString(e.getValue()));
            }
            plan.add(plan(file, e.getKey(), source));
        }
        Map<SectionKind, byte[]> sections = new LinkedHashMap<>();
        sections.put(SectionKind.CONFIG, config.toJson().getBytes(StandardCharsets.UTF_8));
        if (tokenizerMetadata != null) {
            GgufTokenizer.Files files = GgufTokenizer.fromMetadata(tokenizerMetadata);
            sections.put(SectionKind.TOKENIZER, files.tokenizerJson());
            sections.put(SectionKind.TOKENIZER_COMPILED, Tokenizer.fromJson(files.tokenizerJson()).toBinary());
            sections.put(SectionKind.TOKENIZER_CONFIG, files.tokenizerConfigJson());
        }
        ObjectNode conversion = new ObjectMapper().createObjectNode();
        conversion.put("converter", "zse 0.1.0");
        conversion.put("source", "zse-engine");
        conversion.put("source_file", file.path().getFileName().toString());
        sections.put(SectionKind.CONVERSION, new ObjectMapper().writeValueAsBytes(conversion));
        long inputBytes = plan.stream().mapToLong(p -> p.source.dataBytes() + p.source.scaleBytes()
                + p.source.zerosBytes()).sum();
        List<String> notes = new ArrayList<>();
        try (ZseWriter writer = ZseWriter.create(out, sections, plan.stream().map(Planned::target).toList())) {
            long done = 0;
            for (Planned p : plan) {
                float[] error = write(file, p, writer.nextTensor());
                String what = p.source.dtype() + (p.tiled ? " (tiled)" : "") + " -> " + p.target.type()
                        + (p.exact ? " (exact)" : String.format(" (re-quantized: added error max %.3g, RMS %.3g %% of RMS w)",
                        error[0], 100 * error[1]));
                notes.add(p.target.name() + ": " + what);
                done += p.source.dataBytes() + p.source.scaleBytes() + p.source.zerosBytes();
                progress.advanced(p.target.name(), done, inputBytes);
            }
            writer.finish();
            notes.stream().filter(n -> !n.endsWith("(exact)")).forEach(progress::note);
            Map<TensorType, Integer> byType = new EnumMap<>(TensorType.class);
            plan.forEach(p -> byType.merge(p.target.type(), 1, Integer::sum));
            return new ModelConverter.Result(config, inputBytes, writer.fileLength(), plan.size(), byType, notes);
        }
    }

    private static Planned plan(ZseEngineFile file, String hf, ZseEngineFile.Entry e) {
        long n = e.elementCount();
        long[] shape = e.shape();
        long rowLength = shape[shape.length - 1];
        int g = e.groupSize();
        long groups = (n + g - 1) / g;
        switch (e.dtype()) {
            case "float16" -> {
                need(e, e.dataBytes() == 2 * n, "data_nbytes " + e.dataBytes() + " is not 2 x " + n);
                TensorType type = shape.length == 1 ? TensorType.F32 : TensorType.F16;
                return new Planned(e, TensorInfo.planned(hf, type, shape, 0), true, false);
            }
            case "int8" -> {
                need(e, e.dataBytes() == groups * g && e.scaleBytes() == 2 * groups, "int8 block sizes do not match "
                        + groups + " groups of " + g);
                boolean exact = shape.length == 2 && g % 32 == 0 && rowLength % g == 0 && noMinus128(file, e);
                return exact ? new Planned(e, TensorInfo.planned(hf, TensorType.Q8, shape, 32), true, false)
                        : decoded(hf, e, false);
            }
            case "int4" -> {
                need(e, e.scaleBytes() == 2 * groups && e.zerosBytes() == 2 * groups, "int4 scale/zero sizes do not match "
                        + groups + " groups of " + g);
                boolean tiled = shape.length == 2 && tiled(file, e);
                if (!tiled) {
                    need(e, e.dataBytes() == (groups * g + 1) / 2, "int4 data_nbytes " + e.dataBytes()
                            + " fits neither layout");
                }
                boolean exact = shape.length == 2 && rowLength % g == 0 && TensorType.Q4.allowsGroupSize(g);
                return exact ? new Planned(e, TensorInfo.planned(hf, TensorType.Q4, shape, g), true, tiled)
                        : decoded(hf, e, tiled);
            }
            default -> throw new IllegalArgumentException("tensor '" + e.name() + "' has dtype '" + e.dtype()
                    + "' (supported: float16, int8, int4)");
        }
    }

    /**
     * A tensor whose groups no .zse type holds (groups crossing rows, or a vector): re-quantized to Q8 when its rows
     * are whole groups of 32, else stored as the F32 values it decodes to (exact).
     */
    private static Planned decoded(String hf, ZseEngineFile.Entry e, boolean tiled) {
        long[] shape = e.shape();
        if (shape.length == 2 && shape[1] % 32 == 0) {
            return new Planned(e, TensorInfo.planned(hf, TensorType.Q8, shape, 32), false, tiled);
        }
        return new Planned(e, TensorInfo.planned(hf, TensorType.F32, shape, 0), true, tiled);
    }

    private static void need(ZseEngineFile.Entry e, boolean condition, String problem) {
        if (!condition) {
            throw new IllegalArgumentException("tensor '" + e.name() + "': " + problem);
        }
    }

    private static boolean noMinus128(ZseEngineFile file, ZseEngineFile.Entry e) {
        MemorySegment data = file.bytes(e.dataOffset(), e.dataBytes());
        for (long i = 0; i < data.byteSize(); i++) {
            if (data.get(ValueLayout.JAVA_BYTE, i) == Byte.MIN_VALUE) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a 2-D int4 tensor's codes are in the 64x16 tiled layout: decided by size where the two layouts differ,
     * otherwise by the writer's min/max rule (each group whose scale is not 1 holds a code 0 and a code 15), which
     * only the true layout satisfies.
     */
    static boolean tiled(ZseEngineFile file, ZseEngineFile.Entry e) {
        long rows = e.shape()[0];
        long cols = e.shape()[1];
        long rowMajor = ((e.elementCount() + e.groupSize() - 1) / e.groupSize() * e.groupSize() + 1) / 2;
        long tiledBytes = (rows + TILE_ROWS - 1) / TILE_ROWS * ((cols + 15) / 16) * TILE_BYTES;
        if (cols % 2 != 0) {
            need(e, e.dataBytes() == rowMajor, "odd row length " + cols + " with data_nbytes " + e.dataBytes());
            return false;
        }
        if (e.dataBytes() == tiledBytes && e.dataBytes() != rowMajor) {
            return true;
        }
        if (e.dataBytes() != tiledBytes) {
            return false;
        }
        return groupsSpanFullRange(file, e, true) > groupsSpanFullRange(file, e, false);
    }

    /** Share of the groups (scale not 1) whose codes include both 0 and 15 when read in the given layout. */
    private static double groupsSpanFullRange(ZseEngineFile file, ZseEngineFile.Entry e, boolean tiled) {
        MemorySegment data = file.bytes(e.dataOffset(), e.dataBytes());
        MemorySegment scales = file.bytes(e.scaleOffset(), e.scaleBytes());
        long n = e.elementCount();
        int g = e.groupSize();
        long groups = 0;
        long full = 0;
        for (long group = 0; group * g < n; group++) {
            if (Float.float16ToFloat(scales.get(LittleEndian.SHORT, 2 * group)) == 1f || (group + 1) * g > n) {
                continue;
            }
            boolean zero = false;
            boolean fifteen = false;
            for (long f = group * g; f < (group + 1) * g; f++) {
                int code = code(data, e, f, tiled);
                zero |= code == 0;
                fifteen |= code == 15;
            }
            groups++;
            full += zero && fifteen ? 1 : 0;
        }
        return groups == 0 ? 0 : (double) full / groups;
    }

    /** The 4-bit code of flat element {@code f}: even elements in the low nibble, in row-major or tiled byte order. */
    private static int code(MemorySegment data, ZseEngineFile.Entry e, long f, boolean tiled) {
        long at;
        if (tiled) {
            long cols = e.shape()[1];
            long row = f / cols;
            long j = f % cols / 2;
            long columnTiles = (cols + 15) / 16;
            at = ((row / TILE_ROWS) * columnTiles + j / 8) * TILE_BYTES + (row % TILE_ROWS) * 8 + j % 8;
        } else {
            at = f / 2;
        }
        int b = data.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
        return f % 2 == 0 ? b & 0xF : b >> 4;
    }

    /** Decodes elements [first, first + count) as the engine defines them (float32 arithmetic). */
    private static void decode(ZseEngineFile file, Planned p, long first, int count, float[] out) {
        ZseEngineFile.Entry e = p.source;
        MemorySegment data = file.bytes(e.dataOffset(), e.dataBytes());
        MemorySegment scales = file.bytes(e.scaleOffset(), e.scaleBytes());
        MemorySegment zeros = file.bytes(e.zerosOffset(), e.zerosBytes());
        int g = e.groupSize();
        for (int i = 0; i < count; i++) {
            long f = first + i;
            out[i] = switch (e.dtype()) {
                case "float16" -> Float.float16ToFloat(data.get(LittleEndian.SHORT, 2 * f));
                case "int8" -> data.get(ValueLayout.JAVA_BYTE, f) * Float.float16ToFloat(scales.get(LittleEndian.SHORT, 2 * (f / g)));
                default -> code(data, e, f, p.tiled) * Float.float16ToFloat(scales.get(LittleEndian.SHORT, 2 * (f / g)))
                        + Float.float16ToFloat(zeros.get(LittleEndian.SHORT, 2 * (f / g)));
            };
        }
    }

    /** Writes one tensor; returns {max abs error, relative RMS error} (zeros when exact). */
    private static float[] write(ZseEngineFile file, Planned p, ZseWriter.TensorSink sink) throws IOException {
        TensorInfo t = p.target;
        ZseEngineFile.Entry e = p.source;
        int rowLength = (int) t.rowLength();
        long rows = t.elementCount() / rowLength;
        int chunkRows = (int) Math.max(1, Math.min(rows, (1 << 20) / rowLength));
        int chunk = chunkRows * rowLength;
        MemorySegment data = MemorySegment.ofArray(new byte[(int) t.type().dataBytes(chunk)]);
        MemorySegment scales = MemorySegment.ofArray(new byte[(int) t.type().scaleBytes(chunk, Math.max(1, t.groupSize()))]);
        float[] values = new float[chunk];
        float[] decoded = new float[chunk];
        ChunkEncoder encoder = new ChunkEncoder(t.type(), t.groupSize());
        double maxError = 0;
        double sumError = 0;
        double sumValue = 0;
        for (long row = 0; row < rows; row += chunkRows) {
            int n = (int) Math.min(chunkRows, rows - row);
            int count = n * rowLength;
            long first = row * rowLength;
            decode(file, p, first, count, values);
            if (!p.exact) {
                encoder.encode(values, n, rowLength, data, scales);
                TensorDecoder.decode(t.type(), t.groupSize(), data, scales, 0, count, decoded, 0);
                for (int i = 0; i < count; i++) {
                    double d = (double) decoded[i] - values[i];
                    maxError = Math.max(maxError, Math.abs(d));
                    sumError += d * d;
                    sumValue += (double) values[i] * values[i];
                }
            } else {
                switch (t.type()) {
                    case F32 -> MemorySegment.copy(values, 0, data, LittleEndian.FLOAT, 0, count);
                    case F16 -> MemorySegment.copy(file.bytes(e.dataOffset() + 2 * first, 2L * count), 0, data, 0, 2L * count);
                    case Q8 -> {
                        MemorySegment.copy(file.bytes(e.dataOffset() + first, count), 0, data, 0, count);
                        MemorySegment theirs = file.bytes(e.scaleOffset(), e.scaleBytes());
                        for (int group = 0; group < count / 32; group++) {
                            scales.set(LittleEndian.SHORT, 2L * group,
                                    theirs.get(LittleEndian.SHORT, 2 * ((first + 32L * group) / e.groupSize())));
                        }
                    }
                    case Q4 -> moveInt4(file, p, first, count, data, scales);
                    default -> throw new IllegalStateException(t.type().toString());
                }
            }
            sink.writeData(data.asSlice(0, t.type().dataBytes(count)));
            if (t.scalesLength() > 0) {
                sink.writeScales(scales.asSlice(0, t.type().scaleBytes(count, t.groupSize())));
            }
        }
        sink.finish();
        return new float[] {(float) maxError, sumValue == 0 ? 0 : (float) Math.sqrt(sumError / sumValue)};
    }

    /** Re-packs whole int4 groups as Q4 groups of the same size: codes to Q4's nibble order, (scale, zero) as (d, m). */
    private static void moveInt4(ZseEngineFile file, Planned p, long first, int count, MemorySegment data,
                                 MemorySegment scales) {
        ZseEngineFile.Entry e = p.source;
        MemorySegment source = file.bytes(e.dataOffset(), e.dataBytes());
        MemorySegment theirScales = file.bytes(e.scaleOffset(), e.scaleBytes());
        MemorySegment theirZeros = file.bytes(e.zerosOffset(), e.zerosBytes());
        int g = e.groupSize();
        for (int group = 0; group < count / g; group++) {
            long theirGroup = first / g + group;
            for (int j = 0; j < g / 2; j++) {
                int low = code(source, e, theirGroup * g + j, p.tiled);
                int high = code(source, e, theirGroup * g + j + g / 2, p.tiled);
                data.set(ValueLayout.JAVA_BYTE, (long) group * g / 2 + j, (byte) (low | high << 4));
            }
            scales.set(LittleEndian.SHORT, 4L * group, theirScales.get(LittleEndian.SHORT, 2 * theirGroup));
            scales.set(LittleEndian.SHORT, 4L * group + 2, theirZeros.get(LittleEndian.SHORT, 2 * theirGroup));
        }
    }

    private static ModelConfig config(Map<String, Object> c, Map<String, Object> tokenizer) {
        String arch = String.valueOf(c.get("arch"));
        if (!List.of("llama", "mistral", "qwen2").contains(arch)) {
            throw new IllegalArgumentException("zse-engine architecture '" + arch + "' is not supported (supported: "
                    + "llama, mistral, qwen2)");
        }
        int hidden = positive(c, "hidden_size");
        int heads = positive(c, "num_heads");
        int kvHeads = positive(c, "num_kv_heads");
        RopeScaling scaling = null;
        if (c.get("rope_scaling") instanceof Map<?, ?> r) {
            Object type = r.containsKey("rope_type") ? r.get("rope_type") : r.get("type");
            scaling = switch (String.valueOf(type)) {
                case "linear" -> RopeScaling.linear(number(r.get("factor"), "rope_scaling.factor"));
                case "llama3" -> RopeScaling.llama3(number(r.get("factor"), "rope_scaling.factor"),
                        number(r.get("low_freq_factor"), "rope_scaling.low_freq_factor"),
                        number(r.get("high_freq_factor"), "rope_scaling.high_freq_factor"),
                        (int) number(r.get("original_max_position_embeddings"),
                                "rope_scaling.original_max_position_embeddings"));
                case "default" -> null;
                default -> throw new IllegalArgumentException("zse-engine rope_scaling type '" + type
                        + "' is not supported (supported: llama3, linear)");
            };
        }
        Integer window = c.get("sliding_window") instanceof Long w && arch.equals("mistral") ? (int) (long) w : null;
        // a tokenizer without a BOS (Qwen2) or an EOS id leaves it out
        Integer bos = tokenizer != null && tokenizer.get("tokenizer.ggml.bos_token_id") instanceof Long b
                ? Math.toIntExact(b) : null;
        List<Integer> eos = tokenizer != null && tokenizer.get("tokenizer.ggml.eos_token_id") instanceof Long e
                ? List.of(Math.toIntExact(e)) : List.of();
        return new ModelConfig(arch, hidden, positive(c, "num_layers"), heads, kvHeads,
                c.containsKey("head_dim") ? positive(c, "head_dim") : hidden / heads, positive(c, "intermediate_size"),
                positive(c, "vocab_size"), positive(c, "max_seq_len"), ropeBase(c, "rope_theta"), scaling,
                normEps(c, "rms_norm_eps"), Boolean.TRUE.equals(c.get("tie_word_embeddings")),
                arch.equals("qwen2"), false, window, bos, eos, null);
    }

    /**
     * The tokenizer section as GGUF-style metadata for {@link GgufTokenizer}: the engine stores vocabulary, merges and
     * special ids but not the tokenizer's kind, so a vocabulary with ▁ pieces and no Ġ (byte-level space) is taken as
     * SentencePiece BPE with byte fallback (Llama style), anything else as GPT-2 byte-level BPE.
     */
    static Map<String, Object> tokenizerMetadata(Map<String, Object> t) {
        if (!(t.get("vocab") instanceof Map<?, ?> vocab) || !(t.get("merges") instanceof List<?> merges)) {
            throw new IllegalArgumentException("tokenizer section has no vocab map or merges list");
        }
        Map<Object, Object> all = new LinkedHashMap<>(vocab);
        if (t.get("added_tokens") instanceof Map<?, ?> added) {
            all.putAll(added);
        }
        String[] tokens = new String[all.size()];
        for (Map.Entry<Object, Object> e : all.entrySet()) {
            if (!(e.getKey() instanceof String token) || !(e.getValue() instanceof Long id) || id < 0 || id >= tokens.length
                    || tokens[(int) (long) id] != null) {
                throw new IllegalArgumentException("tokenizer vocab entry " + e.getKey() + " -> " + e.getValue()
                        + " is not a unique id below " + tokens.length);
            }
            tokens[(int) (long) id] = token;
        }
        List<Object> mergeStrings = new ArrayList<>();
        for (Object merge : merges) {
            if (!(merge instanceof List<?> pair) || pair.size() != 2 || !(pair.get(0) instanceof String a)
                    || !(pair.get(1) instanceof String b)) {
                throw new IllegalArgumentException("tokenizer merge " + merge + " is not a pair of strings");
            }
            mergeStrings.add(a + " " + b);
        }
        Map<?, ?> special = t.get("special_tokens") instanceof Map<?, ?> m ? m : Map.of();
        List<Object> types = new ArrayList<>();
        for (int id = 0; id < tokens.length; id++) {
            types.add(1L);
        }
        if (t.get("added_tokens") instanceof Map<?, ?> added) {
            added.values().forEach(id -> types.set((int) (long) (Long) id, 3L));
        }
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (String key : List.of("bos", "eos", "unk", "pad")) {
            if (special.get(key + "_id") instanceof Long id && id >= 0 && id < tokens.length) {
                types.set((int) (long) id, key.equals("unk") ? 2L : 3L);
                metadata.put("tokenizer.ggml." + (key.equals("unk") ? "unknown" : key.equals("pad") ? "padding" : key)
                        + "_token_id", id);
            }
        }
        List<String> tokenList = Arrays.asList(tokens);
        // ▁ marks spaces in SentencePiece vocabularies; byte-level ones spell a space Ġ (U+0120) instead.
        boolean sentencePiece = tokenList.stream().anyMatch(s -> s.contains("\u2581"))
                && tokenList.stream().noneMatch(s -> s.contains("\u0120"));
        metadata.put("tokenizer.ggml.model", sentencePiece ? "llama" : "gpt2");
        metadata.put("tokenizer.ggml.tokens", new GgufFile.GgufArray(8, List.copyOf(tokenList)));
        metadata.put("tokenizer.ggml.token_type", new GgufFile.GgufArray(5, types));
        metadata.put("tokenizer.ggml.merges", new GgufFile.GgufArray(8, mergeStrings));
        metadata.put("tokenizer.ggml.add_bos_token", sentencePiece);
        return metadata;
    }

    private static int positive(Map<String, Object> c, String key) {
        if (!(c.get(key) instanceof Long v) || v <= 0 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("zse-engine config '" + key + "' is " + c.get(key)
                    + ", expected a positive integer");
        }
        return (int) (long) v;
    }

    private static double ropeBase(Map<String, Object> c, String key) {
        return ModelConfig.requireRopeBase("zse-engine config '" + key + "'", number(c.get(key), key));
    }

    private static double normEps(Map<String, Object> c, String key) {
        return ModelConfig.requireNormEps("zse-engine config '" + key + "'", number(c.get(key), key));
    }

    private static double number(Object value, String key) {
        if (value instanceof Long l) {
            return l;
        }
        if (value instanceof Double d) {
            return d;
        }
        throw new IllegalArgumentException("zse-engine config '" + key + "' is " + value + ", expected a number");
    }
}
