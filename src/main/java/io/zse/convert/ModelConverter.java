package io.zse.convert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.HalfFloats;
import io.zse.format.InterleavedRows;
import io.zse.format.SectionKind;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.TernaryBlocks;
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
    /** Values per chunk (4 MiB of floats; at most 4 MiB of encoded bytes). */
    private static final int CHUNK_ELEMENTS = 1 << 20;
    /** Quantizing is the work: one worker per core. */
    private static final int THREADS = Runtime.getRuntime().availableProcessors();
    /** Chunks being read, encoded or written at once: enough that the writer never waits while cores are busy. */
    private static final int IN_FLIGHT = THREADS + 2;
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
        JsonNode hfConfig = CheckpointJson.object(hfDir.resolve("config.json"), configBytes);
        ModelConfig config = HfConfigNormalizer.normalize(hfConfig, generationBytes == null ? null
                : CheckpointJson.object(hfDir.resolve("generation_config.json"), generationBytes));
        BitNetProjections bitnet = config.bitnet() ? BitNetProjections.of(hfConfig) : null;
        List<String> notes = new ArrayList<>();
        try (HfCheckpoint checkpoint = HfCheckpoint.open(hfDir)) {
            List<Planned> plan = plan(config, bitnet, checkpoint, options, notes);
            notes.forEach(progress::note);
            Map<SectionKind, byte[]> sections = sections(hfDir, config, configBytes, generationBytes, options);
            long inputBytes = plan.stream().mapToLong(Planned::sourceBytes).sum();
            try (ZseWriter writer = ZseWriter.create(out, sections, plan.stream().map(p -> p.target).toList());
                 ChunkPipeline<Chunk> pipeline = new ChunkPipeline<>(THREADS, IN_FLIGHT, Chunk::new)) {
                long[] done = {0};
                for (int i = 0; i < plan.size(); i++) {
                    Planned p = plan.get(i);
                    if (p.target.type() == TensorType.TERNARY) {
                        // BitNet codes go whole and in order: what the pipeline still holds is written first
                        pipeline.drain();
                        TernaryEncoder.write(checkpoint, p.sourceName, bitnet, p.target, writer.nextTensor());
                        done[0] += p.sourceBytes();
                        progress.advanced(p.target.name(), done[0], inputBytes);
                        continue;
                    }
                    String source = p.sourceName;
                    // a fused source serves several tensors: its pages go once the last of them is written
                    boolean lastUse = plan.subList(i + 1, plan.size()).stream()
                            .noneMatch(later -> later.sourceName.equals(source));
                    submitTensor(checkpoint, p, writer, pipeline, () -> {
                        if (lastUse) {
                            checkpoint.release(source);
                        }
                        done[0] += p.sourceBytes();
                        progress.advanced(p.target.name(), done[0], inputBytes);
                    });
                }
                pipeline.drain();
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

    /** One tensor: where it comes from (rows firstRow.. of sourceName, plus offset) and how it is stored. */
    private record Planned(String sourceName, SafetensorsTensor source, long firstRow, float offset,
                           TensorInfo target) {
        /** Bytes of the source this tensor reads (a part of a fused source). */
        long sourceBytes() {
            if (target.type() == TensorType.TERNARY) {
                return source.byteSize();
            }
            return source.byteSize() / source.elementCount() * target.elementCount();
        }
    }

    /** @param bitnet how a BitNet checkpoint stores its projections; null for the other architectures */
    private static List<Planned> plan(ModelConfig config, BitNetProjections bitnet, HfCheckpoint checkpoint,
                                      ConvertOptions options, List<String> notes) {
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
            boolean ternary = bitnet != null && BitNetProjections.isProjection(name);
            if (ternary) {
                shape = TernaryEncoder.checkpointShape(bitnet, shape);
                if (bitnet.packed() != (source.dtype() == SafetensorsDtype.U8)) {
                    throw new IllegalArgumentException(sourceName + " is " + source.dtype() + " but quantization_config "
                            + "implies " + (bitnet.packed() ? "packed U8 codes" : "float weights"));
                }
            } else if (source.dtype() == SafetensorsDtype.U8) {
                throw new IllegalArgumentException(sourceName + " is U8: only a BitNet projection may be packed");
            }
            if (!Arrays.equals(source.shape(), shape)) {
                throw new IllegalArgumentException("shape mismatch: " + sourceName + " is "
                        + Arrays.toString(source.shape()) + " in the checkpoint but config.json implies "
                        + Arrays.toString(shape));
            }
            if (ternary) {
                if (e.getValue()[1] % TernaryBlocks.BLOCK != 0) {
                    throw new IllegalArgumentException(name + ": rows of " + e.getValue()[1] + " elements; TERNARY "
                            + "stores whole blocks of " + TernaryBlocks.BLOCK);
                }
                plan.add(new Planned(sourceName, source, 0, 0f,
                        TensorInfo.planned(name, TensorType.TERNARY, e.getValue(), TernaryBlocks.BLOCK)));
                continue;
            }
            TensorType type = typeFor(name, e.getValue(), config, options);
            int group = options.groupSizeFor(type);
            long rowLength = e.getValue()[e.getValue().length - 1];
            if (type.isQuantized() && rowLength % group != 0) {
                // Q6_K's super-blocks of 256 fall back to Q8's groups of 32, the others to F16
                TensorType fallback = type == TensorType.Q6_K && rowLength % 32 == 0 ? TensorType.Q8 : TensorType.F16;
                notes.add(name + ": rows of " + rowLength + " are not a multiple of group size " + group
                        + ", stored as " + fallback);
                type = fallback;
                group = fallback.defaultGroupSize();
            }
            TensorInfo target = TensorInfo.planned(name, type, e.getValue(), group);
            if (options.interleave() && InterleavedRows.allows(type, group, e.getValue())) {
                target = target.withLayout(ZseLayout.LAYOUT_INTERLEAVED_16);
            }
            plan.add(new Planned(sourceName, source, from.firstRow(), from.offset(), target));
        }
        for (SafetensorsTensor t : checkpoint.tensors()) {
            boolean used = plan.stream().anyMatch(p -> p.sourceName.equals(t.name())
                    || p.target.type() == TensorType.TERNARY && BitNetProjections.scaleTensor(p.sourceName).equals(t.name()));
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
        long rowLength = shape[shape.length - 1];
        if (name.equals(ModelTensors.EMBEDDINGS)) {
            return options.embeddingsType(config.tieWordEmbeddings(), rowLength);
        }
        if (name.equals(ModelTensors.LM_HEAD)) {
            return options.lmHeadType(rowLength);
        }
        return options.quant();
    }

    /** Buffers of one chunk: its values and their encoded bytes. */
    private static final class Chunk {
        float[] values = new float[CHUNK_ELEMENTS];
        byte[] data = new byte[0];
        byte[] scales = new byte[0];
        int count;
    }

    /** Runs after a tensor's last chunk is written (on the writing thread). */
    private interface TensorDone {
        void run() throws IOException;
    }

    /**
     * Queues a tensor's chunks: workers read, offset, check and encode them; this thread writes them in order, taking
     * the tensor's sink with its first chunk (the writer hands sinks out in plan order) and finishing it with its last.
     */
    private static void submitTensor(HfCheckpoint checkpoint, Planned p, ZseWriter writer,
                                     ChunkPipeline<Chunk> pipeline, TensorDone whenDone) throws IOException {
        TensorInfo t = p.target;
        TensorType type = t.type();
        int rowLength = (int) t.rowLength();
        long rows = t.elementCount() / rowLength;
        boolean interleave = t.layout() == ZseLayout.LAYOUT_INTERLEAVED_16;
        int chunkRows = (int) Math.max(1, Math.min(rows, CHUNK_ELEMENTS / rowLength));
        if (interleave && chunkRows < rows) { // chunks start on a tile of 16 rows
            chunkRows = Math.max(InterleavedRows.ROWS, chunkRows / InterleavedRows.ROWS * InterleavedRows.ROWS);
        }
        ChunkEncoder encoder = new ChunkEncoder(type, t.groupSize());
        boolean f16 = type == TensorType.F16;
        ZseWriter.TensorSink[] sink = new ZseWriter.TensorSink[1];
        for (long first = 0; first < rows; first += chunkRows) {
            long row = first;
            int n = (int) Math.min(chunkRows, rows - row);
            boolean firstChunk = row == 0;
            boolean lastChunk = row + n == rows;
            pipeline.submit(chunk -> {
                int count = n * rowLength;
                // a row longer than a chunk (never in a real model) makes the chunk that one row
                float[] values = chunk.values.length >= count ? chunk.values : (chunk.values = new float[count]);
                checkpoint.readFloats(p.sourceName, (p.firstRow + row) * rowLength, count, values, 0);
                for (int i = 0; i < count; i++) {
                    if (p.offset != 0) { // (x + 0 would turn -0 into +0)
                        values[i] += p.offset;
                    }
                    if (!Float.isFinite(values[i])) {
                        throw new IllegalArgumentException("tensor " + p.sourceName + " holds " + values[i]
                                + " at element " + (row * rowLength + i));
                    }
                    // F16 would store it as an infinity, which turns every activation it touches into NaN
                    if (f16 && Float.isInfinite(HalfFloats.roundToF16(values[i]))) {
                        throw new IllegalArgumentException("tensor " + p.sourceName + " holds " + values[i]
                                + " at element " + (row * rowLength + i) + ", beyond the F16 range (±"
                                + (int) HalfFloats.F16_MAX + "): convert it to bf16 or f32 instead");
                    }
                }
                chunk.count = count;
                chunk.data = atLeast(chunk.data, type.dataBytes(count));
                chunk.scales = atLeast(chunk.scales, t.scalesLength() > 0 ? type.scaleBytes(count, t.groupSize()) : 0);
                encoder.encodeHere(values, n, rowLength, MemorySegment.ofArray(chunk.data),
                        MemorySegment.ofArray(chunk.scales));
                if (interleave) {
                    InterleavedRows.interleave(type, t.groupSize(), n, rowLength, MemorySegment.ofArray(chunk.data),
                            MemorySegment.ofArray(chunk.scales));
                }
            }, chunk -> {
                // its source pages are read: drop them, so only the chunks in flight stay resident
                checkpoint.release(p.sourceName, (p.firstRow + row) * rowLength, chunk.count);
                if (firstChunk) {
                    sink[0] = writer.nextTensor();
                }
                sink[0].writeData(MemorySegment.ofArray(chunk.data).asSlice(0, type.dataBytes(chunk.count)));
                if (t.scalesLength() > 0) {
                    sink[0].writeScales(MemorySegment.ofArray(chunk.scales)
                            .asSlice(0, type.scaleBytes(chunk.count, t.groupSize())));
                }
                if (lastChunk) {
                    sink[0].finish();
                    whenDone.run();
                }
            });
        }
    }

    private static byte[] atLeast(byte[] buffer, long length) {
        return buffer.length >= length ? buffer : new byte[Math.toIntExact(length)];
    }

    private static Map<SectionKind, byte[]> sections(Path dir, ModelConfig config, byte[] hfConfig, byte[] generation,
                                                     ConvertOptions options) throws IOException {
        Map<SectionKind, byte[]> s = new LinkedHashMap<>();
        s.put(SectionKind.CONFIG, config.toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        s.put(SectionKind.HF_CONFIG, hfConfig);
        byte[] tokenizer = required(dir, "tokenizer.json");
        CheckpointJson.check(dir.resolve("tokenizer.json"), tokenizer);
        s.put(SectionKind.TOKENIZER, tokenizer);
        // Loading also refuses, at convert time, a tokenizer whose components the server could not run.
        s.put(SectionKind.TOKENIZER_COMPILED, Tokenizer.fromJson(tokenizer).toBinary());
        // copied as they are, so checked here: serve and chat parse them
        putIfPresent(s, SectionKind.TOKENIZER_CONFIG, TokenizerConfigSection.of(dir));
        putIfPresent(s, SectionKind.GENERATION_CONFIG, generation);
        putIfPresent(s, SectionKind.SPECIAL_TOKENS_MAP, optionalJson(dir, "special_tokens_map.json"));
        ObjectNode conversion = JSON.createObjectNode();
        conversion.put("converter", "zse 0.1.0");
        conversion.put("quant", options.quant().name());
        conversion.put("group_size", options.groupSize());
        conversion.put("embeddings", options.embeddingsType(config.tieWordEmbeddings(), config.hiddenSize()).name());
        conversion.put("lm_head", options.lmHeadType(config.hiddenSize()).name());
        byte[] pooling = optional(dir, "1_Pooling/config.json"); // sentence-transformers: how embeddings are pooled
        if (pooling != null) {
            JsonNode modes = CheckpointJson.object(dir.resolve("1_Pooling/config.json"), pooling);
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

    /** {@code file}'s bytes, checked to be a JSON object, or null when the checkpoint has none. */
    private static byte[] optionalJson(Path dir, String file) throws IOException {
        byte[] bytes = optional(dir, file);
        if (bytes != null) {
            CheckpointJson.check(dir.resolve(file), bytes);
        }
        return bytes;
    }
}
