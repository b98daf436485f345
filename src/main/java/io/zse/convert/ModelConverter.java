package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.InterleavedRows;
import io.zse.format.SectionKind;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import io.zse.format.ZseWriter;
import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import io.zse.tokenizer.Tokenizer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Converts a Hugging Face checkpoint directory into one {@code .zse} file. Tensors stream through in chunks of rows,
 * so memory stays bounded by the chunk size whatever the model size.
 */
public final class ModelConverter {
    /** Values per chunk (16 MiB of floats). */
    private static final int CHUNK_ELEMENTS = 1 << 22;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Receives progress; called from the converting thread. */
    public interface Progress {
        void advanced(String tensor, long inputBytesDone, long inputBytesTotal);

        void note(String message);

        Progress NONE = new Progress() {
            @Override
            public void advanced(String tensor, long done, long total) {
            }

            @Override
            public void note(String message) {
            }
        };
    }

    /** What a conversion did. */
    public record Result(ModelConfig config, long inputBytes, long outputBytes, int tensors,
                         Map<TensorType, Integer> tensorsByType, List<String> notes) {
    }

    private ModelConverter() {
    }

    public static Result convert(Path hfDir, Path out, ConvertOptions options, Progress progress) throws IOException {
        if (!Files.isDirectory(hfDir)) {
            throw new NoSuchFileException(hfDir.toString(), null, "checkpoint directory not found");
        }
        if (Files.exists(out) && !options.force()) {
            throw new FileAlreadyExistsException(out.toString(), null, "output exists (use --force to replace it)");
        }
        byte[] configBytes = required(hfDir, "config.json");
        byte[] generationBytes = optional(hfDir, "generation_config.json");
        ModelConfig config = HfConfigNormalizer.normalize(parse(hfDir, "config.json", configBytes),
                generationBytes == null ? null : parse(hfDir, "generation_config.json", generationBytes));
        List<String> notes = new ArrayList<>();
        try (HfCheckpoint checkpoint = HfCheckpoint.open(hfDir)) {
            List<Planned> plan = plan(config, checkpoint, options, notes);
            notes.forEach(progress::note);
            Map<SectionKind, byte[]> sections = sections(hfDir, config, configBytes, generationBytes, options);
            long inputBytes = plan.stream().mapToLong(Planned::sourceBytes).sum();
            try (ZseWriter writer = ZseWriter.create(out, sections, plan.stream().map(p -> p.target).toList())) {
                long done = 0;
                for (int i = 0; i < plan.size(); i++) {
                    Planned p = plan.get(i);
                    writeTensor(checkpoint, p, writer.nextTensor());
                    String source = p.sourceName;
                    if (plan.subList(i + 1, plan.size()).stream().noneMatch(later -> later.sourceName.equals(source))) {
                        checkpoint.release(source); // a fused source serves several tensors
                    }
                    done += p.sourceBytes();
                    progress.advanced(p.target.name(), done, inputBytes);
                }
                writer.finish();
                Map<TensorType, Integer> byType = new EnumMap<>(TensorType.class);
                plan.forEach(p -> byType.merge(p.target.type(), 1, Integer::sum));
                return new Result(config, inputBytes, writer.fileLength(), plan.size(), byType, notes);
            } catch (IOException e) {
                if (String.valueOf(e.getMessage()).contains("No space left")) {
                    throw new IOException("no space left on the device while writing " + out
                            + " (the partial file was removed)", e);
                }
                throw e;
            }
        }
    }

    /** One tensor: where it comes from (rows firstRow.. of sourceName, times scale) and how it is stored. */
    private record Planned(String sourceName, SafetensorsTensor source, long firstRow, float scale, TensorInfo target) {
        /** Bytes of the source this tensor reads (a part of a fused source). */
        long sourceBytes() {
            return source.byteSize() / source.elementCount() * target.elementCount();
        }
    }

    private static List<Planned> plan(ModelConfig config, HfCheckpoint checkpoint, ConvertOptions options,
                                      List<String> notes) {
        Map<String, long[]> expected = ModelTensors.expected(config);
        Map<String, long[]> stored = ModelTensors.checkpoint(config);
        List<Planned> plan = new ArrayList<>();
        for (Map.Entry<String, long[]> e : expected.entrySet()) {
            String name = e.getKey();
            ModelTensors.Source from = ModelTensors.source(config, name);
            String sourceName = from.name();
            if (!checkpoint.has(name) && name.equals(ModelTensors.EMBEDDINGS) && config.tieWordEmbeddings()
                    && checkpoint.has(ModelTensors.LM_HEAD)) {
                sourceName = ModelTensors.LM_HEAD;
            }
            SafetensorsTensor source = checkpoint.tensor(sourceName).orElseThrow(() -> new IllegalArgumentException(
                    "checkpoint is missing tensor " + from.name() + " that config.json implies"));
            long[] shape = stored.getOrDefault(from.name(), e.getValue());
            if (!Arrays.equals(source.shape(), shape)) {
                throw new IllegalArgumentException("shape mismatch: " + sourceName + " is "
                        + Arrays.toString(source.shape()) + " in the checkpoint but config.json implies "
                        + Arrays.toString(shape));
            }
            TensorType type = typeFor(name, e.getValue(), config, options);
            int group = options.groupSizeFor(type);
            if (type.isQuantized() && e.getValue()[e.getValue().length - 1] % group != 0) {
                notes.add(name + ": rows of " + e.getValue()[e.getValue().length - 1] + " are not a multiple of group size "
                        + group + ", stored as F16");
                type = TensorType.F16;
                group = 0;
            }
            TensorInfo target = TensorInfo.planned(name, type, e.getValue(), group);
            if (options.interleave() && InterleavedRows.allows(type, group, e.getValue())) {
                target = target.withLayout(ZseLayout.LAYOUT_INTERLEAVED_16);
            }
            plan.add(new Planned(sourceName, source, from.firstRow(), from.scale(), target));
        }
        for (SafetensorsTensor t : checkpoint.tensors()) {
            boolean used = plan.stream().anyMatch(p -> p.sourceName.equals(t.name()));
            boolean tiedHead = t.name().equals(ModelTensors.LM_HEAD) && config.tieWordEmbeddings();
            if (!used && !tiedHead && !t.name().endsWith("rotary_emb.inv_freq")) {
                throw new IllegalArgumentException("checkpoint tensor " + t.name()
                        + " is not part of the model config.json describes (wrong config or unsupported variant)");
            }
        }
        return plan;
    }

    private static TensorType typeFor(String name, long[] shape, ModelConfig config, ConvertOptions options) {
        if (shape.length == 1) {
            return TensorType.F32; // norms and biases: tiny, and precision matters
        }
        if (name.equals(ModelTensors.EMBEDDINGS)) {
            return options.embeddingsType(config.tieWordEmbeddings());
        }
        if (name.equals(ModelTensors.LM_HEAD)) {
            return options.lmHeadType();
        }
        return options.quant();
    }

    private static void writeTensor(HfCheckpoint checkpoint, Planned p, ZseWriter.TensorSink sink) throws IOException {
        TensorInfo t = p.target;
        int rowLength = (int) t.rowLength();
        long rows = t.elementCount() / rowLength;
        boolean interleave = t.layout() == ZseLayout.LAYOUT_INTERLEAVED_16;
        int chunkRows = (int) Math.max(1, Math.min(rows, CHUNK_ELEMENTS / rowLength));
        if (interleave && chunkRows < rows) { // chunks start on a tile of 16 rows
            chunkRows = Math.max(InterleavedRows.ROWS, chunkRows / InterleavedRows.ROWS * InterleavedRows.ROWS);
        }
        float[] values = new float[chunkRows * rowLength];
        MemorySegment data = MemorySegment.ofArray(new byte[(int) t.type().dataBytes((long) chunkRows * rowLength)]);
        MemorySegment scales = MemorySegment.ofArray(
                new byte[(int) t.type().scaleBytes((long) chunkRows * rowLength, Math.max(1, t.groupSize()))]);
        ChunkEncoder encoder = new ChunkEncoder(t.type(), t.groupSize());
        for (long row = 0; row < rows; row += chunkRows) {
            int n = (int) Math.min(chunkRows, rows - row);
            int count = n * rowLength;
            checkpoint.readFloats(p.sourceName, (p.firstRow + row) * rowLength, count, values, 0);
            for (int i = 0; i < count; i++) {
                values[i] *= p.scale;
                if (!Float.isFinite(values[i])) {
                    throw new IllegalArgumentException("tensor " + p.sourceName + " holds " + values[i]
                            + " at element " + (row * rowLength + i));
                }
            }
            encoder.encode(values, n, rowLength, data, scales);
            if (interleave) {
                InterleavedRows.interleave(t.type(), t.groupSize(), n, rowLength, data, scales);
            }
            sink.writeData(data.asSlice(0, t.type().dataBytes(count)));
            if (t.scalesLength() > 0) {
                sink.writeScales(scales.asSlice(0, t.type().scaleBytes(count, t.groupSize())));
            }
        }
        sink.finish();
    }

    private static Map<SectionKind, byte[]> sections(Path dir, ModelConfig config, byte[] hfConfig, byte[] generation,
                                                     ConvertOptions options) throws IOException {
        Map<SectionKind, byte[]> s = new LinkedHashMap<>();
        s.put(SectionKind.CONFIG, config.toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        s.put(SectionKind.HF_CONFIG, hfConfig);
        byte[] tokenizer = required(dir, "tokenizer.json");
        s.put(SectionKind.TOKENIZER, tokenizer);
        // Loading also refuses, at convert time, a tokenizer whose components the server could not run.
        s.put(SectionKind.TOKENIZER_COMPILED, Tokenizer.fromJson(tokenizer).toBinary());
        putIfPresent(s, SectionKind.TOKENIZER_CONFIG, optional(dir, "tokenizer_config.json"));
        putIfPresent(s, SectionKind.GENERATION_CONFIG, generation);
        putIfPresent(s, SectionKind.SPECIAL_TOKENS_MAP, optional(dir, "special_tokens_map.json"));
        ObjectNode conversion = JSON.createObjectNode();
        conversion.put("converter", "zse 0.1.0");
        conversion.put("quant", options.quant().name());
        conversion.put("group_size", options.groupSize());
        conversion.put("embeddings", options.embeddingsType(config.tieWordEmbeddings()).name());
        conversion.put("lm_head", options.lmHeadType().name());
        byte[] pooling = optional(dir, "1_Pooling/config.json"); // sentence-transformers: how embeddings are pooled
        if (pooling != null) {
            JsonNode modes = parse(dir, "1_Pooling/config.json", pooling);
            if (modes.path("pooling_mode_lasttoken").asBoolean()) {
                conversion.put("pooling", "last");
            } else if (modes.path("pooling_mode_mean_tokens").asBoolean()) {
                conversion.put("pooling", "mean");
            }
        }
        s.put(SectionKind.CONVERSION, JSON.writeValueAsBytes(conversion));
        return s;
    }

    private static void putIfPresent(Map<SectionKind, byte[]> s, SectionKind kind, byte[] bytes) {
        if (bytes != null) {
            s.put(kind, bytes);
        }
    }

    private static byte[] required(Path dir, String file) throws IOException {
        byte[] bytes = optional(dir, file);
        if (bytes == null) {
            throw new NoSuchFileException(dir.resolve(file).toString(), null, "checkpoint has no " + file);
        }
        return bytes;
    }

    private static byte[] optional(Path dir, String file) throws IOException {
        Path p = dir.resolve(file);
        return Files.isRegularFile(p) ? Files.readAllBytes(p) : null;
    }

    private static JsonNode parse(Path dir, String file, byte[] bytes) {
        try {
            JsonNode node = JSON.readTree(bytes);
            if (node == null || !node.isObject()) {
                throw new IllegalArgumentException(dir.resolve(file) + " is not a JSON object");
            }
            return node;
        } catch (IOException e) {
            throw new IllegalArgumentException(dir.resolve(file) + " is not valid JSON: " + e.getMessage());
        }
    }
}
