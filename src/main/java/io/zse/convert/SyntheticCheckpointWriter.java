package io.zse.convert;

import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Writes a Hugging Face layout checkpoint (config.json, generation_config.json, tokenizer files and safetensors
 * weights, optionally sharded) with random weights of the shape a config.json describes. Tensors are generated and
 * streamed chunk by chunk, so memory use does not grow with the model.
 */
public final class SyntheticCheckpointWriter {
    /** Tokenizer files copied when present; tokenizer.json is required. */
    static final List<String> TOKENIZER_FILES = List.of("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json");
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int CHUNK_ELEMENTS = 1 << 16;
    /** Chunks in flight between the generator and the writer thread. */
    private static final int PIPELINE_CHUNKS = 4;

    /** What was written. */
    public record Result(long parameters, long dataBytes, int files, double seconds) {
        public double megabytesPerSecond() {
            return dataBytes / 1e6 / Math.max(seconds, 1e-9);
        }
    }

    private final Map<String, Object> config;
    private final SafetensorsDtype dtype;
    private final long seed;
    private final int shards;
    private final Path tokenizerDir;
    private final PrintStream progress;

    /**
     * @param config       config.json values; its torch_dtype is replaced by {@code dtype}
     * @param tokenizerDir folder with tokenizer.json (and usually tokenizer_config.json) to copy
     * @param progress     where progress lines go (stderr for the CLI)
     */
    public SyntheticCheckpointWriter(Map<String, Object> config, SafetensorsDtype dtype, long seed, int shards,
                                     Path tokenizerDir, PrintStream progress) {
        if (shards < 1) {
            throw new IllegalArgumentException("--shards must be at least 1, got " + shards);
        }
        this.config = new LinkedHashMap<>(config);
        this.config.put("torch_dtype", dtype.torchName());
        this.dtype = dtype;
        this.seed = seed;
        this.shards = shards;
        this.tokenizerDir = tokenizerDir;
        this.progress = progress;
    }

    /** Writes the checkpoint into {@code outDir}, which must exist; existing files of the same names are replaced. */
    public Result write(Path outDir) throws IOException {
        long start = System.nanoTime();
        ModelConfig model = HfConfigNormalizer.normalize(JSON.valueToTree(config), null);
        BitNetProjections bitnet = model.bitnet() ? BitNetProjections.of(JSON.valueToTree(config)) : null;
        List<SafetensorsTensor> tensors = new ArrayList<>();
        ModelTensors.checkpoint(model).forEach((name, shape) -> {
            if (bitnet != null && bitnet.packed() && BitNetProjections.isProjection(name)) {
                tensors.add(new SafetensorsTensor(name, SafetensorsDtype.U8, TernaryEncoder.checkpointShape(bitnet, shape)));
                tensors.add(new SafetensorsTensor(BitNetProjections.scaleTensor(name), dtype, new long[]{1}));
            } else {
                tensors.add(new SafetensorsTensor(name, dtype, shape));
            }
        });
        if (shards > tensors.size()) {
            throw new IllegalArgumentException("--shards " + shards + " exceeds the " + tensors.size() + " tensors");
        }
        long totalBytes = tensors.stream().mapToLong(SafetensorsTensor::byteSize).sum();
        progress.printf("synth: %d layers, %.3f B parameters, %.2f GB %s in %d file(s) -> %s%n", model.numLayers(),
                model.parameterCount() / 1e9, totalBytes / 1e9, dtype, shards, outDir);

        copyTokenizer(outDir);
        JSON.writeValue(outDir.resolve("config.json").toFile(), config);
        JSON.writeValue(outDir.resolve("generation_config.json").toFile(), generationConfig());

        List<List<SafetensorsTensor>> groups = splitIntoShards(tensors, totalBytes);
        Progress meter = new Progress(totalBytes);
        Map<String, String> weightMap = new TreeMap<>();
        for (int s = 0; s < groups.size(); s++) {
            String fileName = groups.size() == 1 ? HfCheckpoint.SINGLE_FILE
                    : String.format("model-%05d-of-%05d.safetensors", s + 1, groups.size());
            writeShard(outDir.resolve(fileName), groups.get(s), meter);
            for (SafetensorsTensor t : groups.get(s)) {
                weightMap.put(t.name(), fileName);
            }
        }
        if (groups.size() > 1) {
            Map<String, Object> index = new LinkedHashMap<>();
            index.put("metadata", Map.of("total_size", totalBytes));
            index.put("weight_map", weightMap);
            JSON.writeValue(outDir.resolve(HfCheckpoint.INDEX_FILE).toFile(), index);
        }
        Result result = new Result(model.parameterCount(), totalBytes, groups.size(),
                (System.nanoTime() - start) / 1e9);
        progress.printf("synth: wrote %.2f GB in %.1f s (%.0f MB/s)%n", totalBytes / 1e9, result.seconds(),
                result.megabytesPerSecond());
        return result;
    }

    /**
     * Generates values on a second thread while this one converts and writes, so random generation and disk I/O
     * overlap; a fixed pool of chunk buffers bounds memory.
     */
    private void writeShard(Path file, List<SafetensorsTensor> tensors, Progress meter) throws IOException {
        BlockingQueue<float[]> free = new ArrayBlockingQueue<>(PIPELINE_CHUNKS);
        BlockingQueue<float[]> filled = new ArrayBlockingQueue<>(PIPELINE_CHUNKS);
        for (int i = 0; i < PIPELINE_CHUNKS; i++) {
            free.add(new float[CHUNK_ELEMENTS]);
        }
        Thread generator = Thread.ofPlatform().name("synth-generator").daemon().start(() -> {
            try {
                for (SafetensorsTensor t : tensors) {
                    if (isPacked(t)) {
                        continue;
                    }
                    SyntheticWeights weights = SyntheticWeights.forTensor(t, seed);
                    for (long left = t.elementCount(); left > 0; left -= CHUNK_ELEMENTS) {
                        float[] chunk = free.take();
                        weights.fill(chunk, (int) Math.min(left, CHUNK_ELEMENTS));
                        filled.put(chunk);
                    }
                }
            } catch (InterruptedException stop) {
                // The writer failed and stopped consuming.
            }
        });
        try (SafetensorsWriter writer = SafetensorsWriter.create(file, tensors, Map.of("format", "pt"))) {
            long packedColumns = 0;
            for (SafetensorsTensor t : tensors) {
                if (t.dtype() == SafetensorsDtype.U8) {
                    writePackedCodes(writer, t);
                    packedColumns = t.shape()[1];
                    meter.advance(t, progress);
                    continue;
                }
                if (isPacked(t)) { // weight_scale: t / scale then has variance 1 / in, as the float weights do
                    writer.writeFloats(new float[]{(float) Math.sqrt(2.0 * packedColumns / 3.0)}, 0, 1);
                    meter.advance(t, progress);
                    continue;
                }
                for (long left = t.elementCount(); left > 0; left -= CHUNK_ELEMENTS) {
                    float[] chunk = filled.take();
                    writer.writeFloats(chunk, 0, (int) Math.min(left, CHUNK_ELEMENTS));
                    free.put(chunk);
                }
                meter.advance(t, progress);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing " + file);
        } finally {
            generator.interrupt();
        }
    }

    /** BitNet's packed codes and their scales: written by the writer thread itself, not from float chunks. */
    private static boolean isPacked(SafetensorsTensor t) {
        return t.dtype() == SafetensorsDtype.U8 || t.name().endsWith(".weight_scale");
    }

    /** Random packed ternary codes: four 2-bit fields per byte, each t + 1 uniform over {0, 1, 2}. */
    private void writePackedCodes(SafetensorsWriter writer, SafetensorsTensor t) throws IOException {
        SplittableRandom random = new SplittableRandom(seed ^ t.name().hashCode());
        byte[] chunk = new byte[CHUNK_ELEMENTS];
        for (long left = t.elementCount(); left > 0; left -= chunk.length) {
            int n = (int) Math.min(left, chunk.length);
            for (int i = 0; i < n; i++) {
                chunk[i] = (byte) (random.nextInt(3) | random.nextInt(3) << 2 | random.nextInt(3) << 4
                        | random.nextInt(3) << 6);
            }
            writer.writeBytes(ByteBuffer.wrap(chunk, 0, n));
        }
    }

    /** Contiguous groups of roughly equal byte size, none empty (assumes shards <= tensors). */
    private List<List<SafetensorsTensor>> splitIntoShards(List<SafetensorsTensor> tensors, long totalBytes) {
        List<List<SafetensorsTensor>> groups = new ArrayList<>();
        List<SafetensorsTensor> group = new ArrayList<>();
        long written = 0;
        for (int i = 0; i < tensors.size(); i++) {
            SafetensorsTensor t = tensors.get(i);
            group.add(t);
            written += t.byteSize();
            int shardsLeft = shards - groups.size() - 1;
            int tensorsLeft = tensors.size() - i - 1;
            boolean reachedShare = written >= (groups.size() + 1) * (totalBytes / shards);
            if (shardsLeft > 0 && (reachedShare || tensorsLeft == shardsLeft)) {
                groups.add(group);
                group = new ArrayList<>();
            }
        }
        groups.add(group);
        return groups;
    }

    private Map<String, Object> generationConfig() {
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("_from_model_config", true);
        g.put("bos_token_id", config.get("bos_token_id"));
        g.put("eos_token_id", config.get("eos_token_id"));
        return g;
    }

    private void copyTokenizer(Path outDir) throws IOException {
        if (!Files.isRegularFile(tokenizerDir.resolve("tokenizer.json"))) {
            throw new IOException("no tokenizer.json in " + tokenizerDir);
        }
        for (String name : TOKENIZER_FILES) {
            Path source = tokenizerDir.resolve(name);
            if (Files.isRegularFile(source)) {
                // Copy the content only: shared sources may be read-only, and the output should not be.
                try (InputStream in = Files.newInputStream(source)) {
                    Files.copy(in, outDir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    /** Prints a line each time another tenth of the bytes is written. */
    private static final class Progress {
        private final long totalBytes;
        private long doneBytes;
        private int tenthsReported;

        Progress(long totalBytes) {
            this.totalBytes = totalBytes;
        }

        void advance(SafetensorsTensor finished, PrintStream out) {
            doneBytes += finished.byteSize();
            int tenths = (int) (doneBytes * 10 / Math.max(totalBytes, 1));
            if (tenths > tenthsReported && tenths < 10) {
                tenthsReported = tenths;
                out.printf("synth: %d%% (%.2f of %.2f GB), at %s%n", tenths * 10, doneBytes / 1e9,
                        totalBytes / 1e9, finished.name());
            }
        }
    }
}
