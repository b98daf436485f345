package io.zse.convert.gguf;

import io.zse.convert.ImportFormatException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.convert.ChunkEncoder;
import io.zse.convert.BitNetProjections;
import io.zse.convert.ModelConverter;
import io.zse.format.InterleavedRows;
import io.zse.format.LittleEndian;
import io.zse.format.SectionKind;
import io.zse.format.TensorDecoder;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseLayout;
import io.zse.format.TernaryBlocks;
import io.zse.format.ZseWriter;
import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import io.zse.tokenizer.Tokenizer;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
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
import java.util.function.LongUnaryOperator;

/**
 * Converts a GGUF file (llama.cpp) into a {@code .zse} file. Tensors keep their bits wherever a .zse type holds them
 * (F32, F16, BF16 as they are; Q8_0 as Q8; Q4_0 and Q4_1 as Q4 with groups of 32; Q4_K, Q5_K and Q6_K as the .zse
 * types of the same names; Q5_0 and Q5_1 as Q5); BitNet b1.58 projections (TQ1_0, TQ2_0, or ternary floats) as
 * TERNARY ({@link GgufTernaryProjection}); blocks no .zse type holds as they are (a Q8_0 code -128, a Q4_0/Q5_0 d
 * too large for m = -8d/-16d in F16) are decoded and re-quantized to Q8. Every
 * step that is not exact is measured against the GGUF's own values and reported. Llama's q/k rows, which llama.cpp
 * interleaves for its RoPE, are put back in Hugging Face order. Phi-3's fused attn_qkv and ffn_up are split as its
 * safetensors checkpoint is ({@link ModelTensors#source}). Asked to
 * interleave, it stores the 2-D Q8 and Q4 tensors in layout interleaved-16 ({@link InterleavedRows}): the same bytes,
 * only reordered.
 */
public final class GgufConverter {
    private static final int CHUNK_ELEMENTS = 1 << 22;

    private enum Mode {
        /** bytes copied */
        COPY,
        /** blocks moved by {@link GgufRowTranscoder} */
        MOVE,
        /** decoded to F32 and encoded as the target type */
        DECODE,
        /** a BitNet projection's values -s, 0, s as TERNARY codes ({@link GgufTernaryProjection}) */
        TERNARY
    }

    /**
     * One tensor: rows sourceRow(i) of the GGUF tensor; scale, for TERNARY only, is s times llama.cpp's {@code .scale}
     * of the projection (1 for the other modes, which keep or re-encode the values as they are).
     */
    private record Planned(String ggufName, GgufFile.GgufTensor source, TensorInfo target, Mode mode,
                           LongUnaryOperator sourceRow, float scale) {
        boolean exact() {
            return mode != Mode.DECODE || !target.type().isQuantized();
        }
    }

    private GgufConverter() {
    }

    /** Converts into layout row-groups throughout. */
    public static ModelConverter.Result convert(Path gguf, Path out, boolean force, ModelConverter.Progress progress)
            throws IOException {
        return convert(gguf, out, force, false, progress);
    }

    /** @param interleave store the 2-D Q8 and Q4 tensors in layout interleaved-16 */
    public static ModelConverter.Result convert(Path gguf, Path out, boolean force, boolean interleave,
                                                ModelConverter.Progress progress) throws IOException {
        if (Files.exists(out) && !force) {
            throw new FileAlreadyExistsException(out.toString(), null, "output exists (use --force to replace it)");
        }
        try (GgufFile file = GgufFile.open(gguf)) {
            try {
                return convert(file, out, interleave, progress);
            } catch (IllegalArgumentException e) {
                throw new ImportFormatException(gguf, e.getMessage());
            }
        }
    }

    private static ModelConverter.Result convert(GgufFile file, Path out, boolean interleave,
                                                 ModelConverter.Progress progress) throws IOException {
        GgufMetadata metadata = new GgufMetadata(file.metadata());
        Map<String, GgufFile.GgufTensor> byName = new LinkedHashMap<>();
        file.tensors().forEach(t -> byName.put(t.name(), t));
        GgufFile.GgufTensor embeddings = byName.getOrDefault(GgufTensorNames.EMBEDDINGS, byName.get(GgufTensorNames.OUTPUT));
        if (embeddings == null || embeddings.dims().length != 2) {
            throw new IllegalArgumentException("GGUF has no 2-D token_embd.weight or output.weight");
        }
        boolean hasOutput = byName.containsKey(GgufTensorNames.OUTPUT) && byName.containsKey(GgufTensorNames.EMBEDDINGS);
        ModelConfig config = GgufModelConfig.of(metadata, hasOutput, byName.containsKey("blk.0.attn_q.bias"),
                factors(file, byName.get(GgufTensorNames.ROPE_FREQS)),
                factors(file, byName.get(GgufTensorNames.ROPE_FACTORS_SHORT)),
                factors(file, byName.get(GgufTensorNames.ROPE_FACTORS_LONG)), Math.toIntExact(embeddings.dims()[1]));
        List<Planned> plan = plan(file, metadata, config, byName);
        if (interleave) {
            plan = plan.stream().map(GgufConverter::interleaved).toList();
        }
        GgufTokenizer.Files tokenizer = GgufTokenizer.build(metadata);
        Map<SectionKind, byte[]> sections = new LinkedHashMap<>();
        sections.put(SectionKind.CONFIG, config.toJson().getBytes(StandardCharsets.UTF_8));
        sections.put(SectionKind.TOKENIZER, tokenizer.tokenizerJson());
        sections.put(SectionKind.TOKENIZER_COMPILED, Tokenizer.fromJson(tokenizer.tokenizerJson()).toBinary());
        sections.put(SectionKind.TOKENIZER_CONFIG, tokenizer.tokenizerConfigJson());
        Map<String, AddedError> errors = new LinkedHashMap<>();
        long inputBytes = plan.stream().mapToLong(p -> p.source.byteSize()).sum();
        List<String> notes = new ArrayList<>();
        try (ZseWriter writer = ZseWriter.create(out, withConversion(sections, file, metadata),
                plan.stream().map(Planned::target).toList())) {
            long done = 0;
            for (Planned p : plan) {
                AddedError error = write(file, p, writer.nextTensor());
                if (!p.exact()) {
                    errors.computeIfAbsent(p.source.type() + " -> " + p.target.type(), k -> new AddedError()).add(error);
                }
                done += p.source.byteSize();
                progress.advanced(p.target.name(), done, inputBytes);
            }
            writer.finish();
            Map<String, Integer> counts = new LinkedHashMap<>();
            plan.forEach(p -> counts.merge(p.source.type() + " -> " + p.target.type()
                    + (p.exact() ? " (exact)" : ""), 1, Integer::sum));
            counts.forEach((k, n) -> {
                String key = k.replace(" (exact)", "");
                notes.add(k + ": " + n + " tensor" + (n == 1 ? "" : "s")
                        + (errors.containsKey(key) ? ", " + errors.get(key) : ""));
            });
            notes.forEach(progress::note);
            Map<TensorType, Integer> byType = new EnumMap<>(TensorType.class);
            plan.forEach(p -> byType.merge(p.target.type(), 1, Integer::sum));
            return new ModelConverter.Result(config, inputBytes, writer.fileLength(), plan.size(), byType, notes);
        }
    }

    /** The values of a RoPE factor tensor (rope_freqs, rope_factors_short/long), or null where the file has none. */
    private static List<Double> factors(GgufFile file, GgufFile.GgufTensor tensor) {
        if (tensor == null) {
            return null;
        }
        if (tensor.dims().length != 1 || tensor.type() != GgmlType.F32) {
            throw new IllegalArgumentException("GGUF " + tensor.name() + " is not a 1-D F32 tensor");
        }
        float[] values = new float[Math.toIntExact(tensor.elementCount())];
        GgmlBlockDecoder.decode(GgmlType.F32, file.bytes(tensor), 0, values.length, values, 0);
        List<Double> factors = new ArrayList<>();
        for (float v : values) {
            factors.add((double) v);
        }
        return factors;
    }

    private static List<Planned> plan(GgufFile file, GgufMetadata metadata, ModelConfig config,
                                      Map<String, GgufFile.GgufTensor> byName) {
        Map<String, String> ggufByHf = new LinkedHashMap<>();
        Map<String, GgufFile.GgufTensor> scaleOf = new LinkedHashMap<>();
        for (String name : byName.keySet()) {
            if (name.equals(GgufTensorNames.ROPE_FREQS) || name.equals(GgufTensorNames.ROPE_FACTORS_SHORT)
                    || name.equals(GgufTensorNames.ROPE_FACTORS_LONG)) {
                continue;
            }
            String scaled = GgufTensorNames.scaledWeight(name);
            if (scaled != null && config.bitnet()) {
                scaleOf.put(scaled, byName.get(name));
                continue;
            }
            String hf = GgufTensorNames.toHf(name, metadata.string("general.architecture"));
            if (hf == null) {
                throw new IllegalArgumentException("tensor '" + name + "' is not part of a "
                        + metadata.string("general.architecture") + " model this converter knows");
            }
            String other = ggufByHf.put(hf, name);
            if (other != null) { // blk.0 and blk.00 are one layer to the name map: neither may stand in for it
                throw new IllegalArgumentException("tensors '" + other + "' and '" + name + "' are both " + hf);
            }
        }
        if (config.tieWordEmbeddings() && !ggufByHf.containsKey(ModelTensors.EMBEDDINGS)) {
            ggufByHf.put(ModelTensors.EMBEDDINGS, ggufByHf.remove(ModelTensors.LM_HEAD));
        }
        Map<String, long[]> expected = ModelTensors.expected(config);
        Map<String, long[]> stored = ModelTensors.checkpoint(config);
        for (String hf : ggufByHf.keySet()) {
            if (!stored.containsKey(hf)) {
                throw new IllegalArgumentException("tensor '" + ggufByHf.get(hf) + "' is not part of the model its "
                        + "metadata describes");
            }
        }
        boolean permuted = metadata.string("general.architecture").equals("llama");
        List<Planned> plan = new ArrayList<>();
        for (Map.Entry<String, long[]> e : expected.entrySet()) {
            // Gemma's offset (1 + w) is not taken: llama.cpp already stores its norms so.
            ModelTensors.Source from = ModelTensors.source(config, e.getKey());
            String ggufName = ggufByHf.get(from.name());
            if (ggufName == null) {
                throw new IllegalArgumentException("GGUF is missing the tensor for " + from.name());
            }
            GgufFile.GgufTensor source = byName.get(ggufName);
            if (!Arrays.equals(source.shape(), stored.get(from.name()))) {
                throw new IllegalArgumentException("tensor '" + ggufName + "' has shape " + Arrays.toString(source.shape())
                        + " but the metadata implies " + Arrays.toString(stored.get(from.name())));
            }
            if (!source.type().isSupported()) {
                throw new IllegalArgumentException("tensor '" + ggufName + "' has type " + source.type()
                        + ", which zse cannot import (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, "
                        + "Q5_K, Q6_K, and TQ1_0, TQ2_0 for BitNet b1.58 projections)");
            }
            if (config.bitnet() && BitNetProjections.isProjection(e.getKey())) {
                plan.add(planTernary(file, e.getKey(), ggufName, source, e.getValue(), scaleOf.remove(ggufName)));
                continue;
            }
            if (source.type() == GgmlType.TQ1_0 || source.type() == GgmlType.TQ2_0) {
                throw new IllegalArgumentException("tensor '" + ggufName + "' has type " + source.type()
                        + ": ternary types are imported only for the projections of a BitNet b1.58 model");
            }
            boolean rotated = e.getKey().contains("self_attn.q_proj") || e.getKey().contains("self_attn.k_proj");
            LongUnaryOperator rows = permuted && rotated ? unpermute(config.headDim()) : LongUnaryOperator.identity();
            long first = from.firstRow();
            plan.add(planTensor(file, e.getKey(), ggufName, source, e.getValue(),
                    first == 0 ? rows : row -> first + rows.applyAsLong(row)));
        }
        if (!scaleOf.isEmpty()) {
            throw new IllegalArgumentException("tensor '" + scaleOf.values().iterator().next().name()
                    + "' scales no BitNet projection of the model");
        }
        return plan;
    }

    /**
     * A BitNet projection as TERNARY: its values checked to be -s, 0, s ({@link GgufTernaryProjection#scale}), times
     * llama.cpp's {@code .scale} tensor if the file has one.
     */
    private static Planned planTernary(GgufFile file, String hf, String ggufName, GgufFile.GgufTensor source,
                                       long[] shape, GgufFile.GgufTensor scaleTensor) {
        if (shape[1] % TernaryBlocks.BLOCK != 0) {
            throw new IllegalArgumentException("tensor '" + ggufName + "' has rows of " + shape[1] + " elements; "
                    + "TERNARY needs whole blocks of " + TernaryBlocks.BLOCK);
        }
        float scale = 1;
        if (scaleTensor != null) {
            if (scaleTensor.elementCount() != 1 || scaleTensor.type() != GgmlType.F32) {
                throw new IllegalArgumentException("tensor '" + scaleTensor.name() + "' is not one F32 value ("
                        + scaleTensor.type() + ", " + scaleTensor.elementCount() + " elements)");
            }
            scale = file.bytes(scaleTensor).get(LittleEndian.FLOAT, 0);
            if (!(scale > 0) || !Float.isFinite(scale)) {
                throw new IllegalArgumentException("tensor '" + scaleTensor.name() + "' is " + scale
                        + ", not a positive scale");
            }
        }
        TensorInfo target = TensorInfo.planned(hf, TensorType.TERNARY, shape, TernaryBlocks.BLOCK);
        float s = GgufTernaryProjection.scale(source, file.bytes(source), (int) shape[0], (int) shape[1]);
        return new Planned(ggufName, source, target, Mode.TERNARY, LongUnaryOperator.identity(), s * scale);
    }

    /**
     * llama.cpp's converter stores each head's rows as interleaved pairs (row 2j + t of a head is Hugging Face's row
     * t * headDim/2 + j), so its RoPE can rotate adjacent elements; this maps a Hugging Face row to the GGUF row.
     */
    static LongUnaryOperator unpermute(int headDim) {
        int half = headDim / 2;
        return row -> {
            long head = row / headDim;
            int within = (int) (row % headDim);
            return head * headDim + 2L * (within % half) + within / half;
        };
    }

    private static Planned planTensor(GgufFile file, String hf, String ggufName, GgufFile.GgufTensor source,
                                      long[] shape, LongUnaryOperator rows) {
        GgmlType type = source.type();
        if (shape.length == 1) {
            return new Planned(ggufName, source, TensorInfo.planned(hf, TensorType.F32, shape, 0), Mode.DECODE, rows,
                    1f);
        }
        TensorType same = switch (type) {
            case F32 -> TensorType.F32;
            case F16 -> TensorType.F16;
            case BF16 -> TensorType.BF16;
            default -> null;
        };
        if (same != null) {
            return new Planned(ggufName, source, TensorInfo.planned(hf, same, shape, 0), Mode.COPY, rows, 1f);
        }
        TensorType moved = switch (type) {
            case Q8_0 -> TensorType.Q8;
            case Q4_0, Q4_1 -> TensorType.Q4;
            case Q5_0, Q5_1 -> TensorType.Q5;
            case Q4_K -> TensorType.Q4_K;
            case Q5_K -> TensorType.Q5_K;
            case Q6_K -> TensorType.Q6_K;
            default -> null;
        };
        if (moved != null && GgufRowTranscoder.movable(type, file.bytes(source))) {
            return new Planned(ggufName, source, TensorInfo.planned(hf, moved, shape, moved.isKQuant() ? 256 : 32),
                    Mode.MOVE, rows, 1f);
        }
        return new Planned(ggufName, source, TensorInfo.planned(hf, TensorType.Q8, shape, 32), Mode.DECODE, rows, 1f);
    }

    /** The tensor in layout interleaved-16 where that layout holds it, else as planned. */
    private static Planned interleaved(Planned p) {
        TensorInfo t = p.target;
        if (!InterleavedRows.allows(t.type(), t.groupSize(), t.shape())) {
            return p;
        }
        return new Planned(p.ggufName, p.source, t.withLayout(ZseLayout.LAYOUT_INTERLEAVED_16), p.mode, p.sourceRow,
                p.scale);
    }

    /** Writes one tensor; returns the error added where the values changed (empty for exact steps). */
    private static AddedError write(GgufFile file, Planned p, ZseWriter.TensorSink sink) throws IOException {
        TensorInfo t = p.target;
        if (p.mode == Mode.TERNARY) {
            GgufTernaryProjection.write(p.source, file.bytes(p.source), (int) t.shape()[0], (int) t.shape()[1],
                    p.scale, sink);
            return new AddedError();
        }
        GgmlType type = p.source.type();
        MemorySegment tensor = file.bytes(p.source);
        int rowLength = (int) t.rowLength();
        long rows = t.elementCount() / rowLength;
        if (t.rank() == 1) {
            // A vector (norm or bias) is one row of ggml elements; a permuted bias moves single elements.
            rowLength = 1;
            rows = t.elementCount();
        }
        int chunkRows = (int) Math.max(1, Math.min(rows, CHUNK_ELEMENTS / rowLength));
        boolean interleave = t.layout() == ZseLayout.LAYOUT_INTERLEAVED_16;
        if (interleave && chunkRows < rows) { // chunks start on a tile of 16 rows
            chunkRows = Math.max(InterleavedRows.ROWS, chunkRows / InterleavedRows.ROWS * InterleavedRows.ROWS);
        }
        int chunk = chunkRows * rowLength;
        MemorySegment data = MemorySegment.ofArray(new byte[(int) t.type().dataBytes(chunk)]);
        MemorySegment scales = MemorySegment.ofArray(new byte[(int) t.type().scaleBytes(chunk, Math.max(1, t.groupSize()))]);
        boolean measure = !p.exact();
        // Floats only where they are encoded or measured: moved blocks are exact and never decoded.
        float[] values = p.mode == Mode.DECODE || measure ? new float[chunk] : null;
        float[] decoded = measure ? new float[chunk] : null;
        ChunkEncoder encoder = p.mode == Mode.DECODE ? new ChunkEncoder(t.type(), t.groupSize()) : null;
        AddedError error = new AddedError();
        long sourceRowBytes = type.bytesFor(rowLength);
        if (t.rank() == 1) {
            // Whole vector decoded at once (its blocks may span several of these one-element "rows").
            float[] all = new float[(int) rows];
            GgmlBlockDecoder.decode(type, tensor, 0, all.length, all, 0);
            for (int i = 0; i < all.length; i++) {
                values[i] = all[(int) p.sourceRow.applyAsLong(i)];
            }
            MemorySegment.copy(values, 0, data, LittleEndian.FLOAT, 0, all.length);
            sink.writeData(data.asSlice(0, 4L * all.length));
            sink.finish();
            return error;
        }
        for (long row = 0; row < rows; row += chunkRows) {
            int n = (int) Math.min(chunkRows, rows - row);
            int count = n * rowLength;
            for (int i = 0; i < n; i++) {
                long source = p.sourceRow.applyAsLong(row + i);
                switch (p.mode) {
                    case COPY -> MemorySegment.copy(tensor, source * sourceRowBytes, data, i * sourceRowBytes,
                            sourceRowBytes);
                    case MOVE -> GgufRowTranscoder.move(type, tensor, source, rowLength, data,
                            (long) i * t.type().dataBytes(rowLength), scales,
                            (long) i * t.type().scaleBytes(rowLength, t.groupSize()));
                    case DECODE -> { }
                }
                if (values != null) {
                    GgmlBlockDecoder.decode(type, tensor, source * rowLength, rowLength, values, i * rowLength);
                }
            }
            if (encoder != null) {
                encoder.encode(values, n, rowLength, data, scales);
            }
            if (measure) {
                TensorDecoder.decode(t.type(), t.groupSize(), data, scales, 0, count, decoded, 0);
                error.add(values, decoded, count);
            }
            if (interleave) {
                InterleavedRows.interleave(t.type(), t.groupSize(), n, rowLength, data, scales);
            }
            sink.writeData(data.asSlice(0, t.type().dataBytes(count)));
            if (t.scalesLength() > 0) {
                sink.writeScales(scales.asSlice(0, t.type().scaleBytes(count, t.groupSize())));
            }
        }
        sink.finish();
        return error;
    }

    private static Map<SectionKind, byte[]> withConversion(Map<SectionKind, byte[]> sections, GgufFile file,
                                                           GgufMetadata metadata) throws IOException {
        ObjectNode conversion = new ObjectMapper().createObjectNode();
        conversion.put("converter", "zse 0.1.0");
        conversion.put("source", "gguf");
        conversion.put("gguf_version", file.version());
        conversion.put("gguf_file", file.path().getFileName().toString());
        if (metadata.has("general.name")) {
            conversion.put("general.name", metadata.string("general.name"));
        }
        if (metadata.has("general.file_type")) {
            conversion.put("general.file_type", metadata.integer("general.file_type"));
        }
        Map<SectionKind, byte[]> all = new LinkedHashMap<>(sections);
        all.put(SectionKind.CONVERSION, new ObjectMapper().writeValueAsBytes(conversion));
        return all;
    }
}
