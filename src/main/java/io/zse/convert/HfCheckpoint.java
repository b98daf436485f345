package io.zse.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The weights of a Hugging Face checkpoint directory: either one {@code model.safetensors} or the shards listed by
 * {@code model.safetensors.index.json}. All files are mapped (never loaded) and validated on open; tensors are read
 * as floats in caller-sized chunks.
 *
 * <p>Tied weights: a safetensors {@code __metadata__} entry whose key is not a stored tensor and whose value is
 * one, e.g. {@code "model.embed_tokens.weight": "lm_head.weight"}, makes the key an alias of the stored tensor.
 */
public final class HfCheckpoint implements AutoCloseable {
    public static final String SINGLE_FILE = "model.safetensors";
    public static final String INDEX_FILE = "model.safetensors.index.json";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path directory;
    private final Arena arena;
    private final List<SafetensorsFile> files;
    private final Map<String, SafetensorsFile> fileByTensor;
    private final Map<String, String> aliases;

    private HfCheckpoint(Path directory, Arena arena, List<SafetensorsFile> files,
                         Map<String, SafetensorsFile> fileByTensor, Map<String, String> aliases) {
        this.directory = directory;
        this.arena = arena;
        this.files = files;
        this.fileByTensor = fileByTensor;
        this.aliases = aliases;
    }

    /** Opens and validates every safetensors file of the checkpoint in {@code directory}. */
    public static HfCheckpoint open(Path directory) throws IOException {
        if (!Files.isDirectory(directory)) {
            throw new SafetensorsException(directory, "no such checkpoint directory");
        }
        Path index = directory.resolve(INDEX_FILE);
        Path single = directory.resolve(SINGLE_FILE);
        List<String> shardNames;
        Map<String, String> weightMap;
        if (Files.isRegularFile(index)) {
            weightMap = readWeightMap(index);
            shardNames = List.copyOf(new TreeSet<>(weightMap.values()));
        } else if (Files.isRegularFile(single)) {
            weightMap = Map.of();
            shardNames = List.of(SINGLE_FILE);
        } else {
            throw new SafetensorsException(directory, "no " + SINGLE_FILE + " or " + INDEX_FILE + " found"
                    + otherSafetensorsNote(directory));
        }
        Arena arena = Arena.ofShared();
        try {
            List<SafetensorsFile> files = new ArrayList<>();
            for (String shard : shardNames) {
                Path shardPath = directory.resolve(shard);
                if (!Files.isRegularFile(shardPath)) {
                    throw new SafetensorsException(index, "names shard '" + shard + "', which does not exist");
                }
                files.add(SafetensorsFile.open(shardPath, arena));
            }
            Map<String, SafetensorsFile> fileByTensor = indexTensors(files);
            checkWeightMap(index, weightMap, fileByTensor);
            Map<String, String> aliases = findAliases(files, fileByTensor);
            return new HfCheckpoint(directory, arena, List.copyOf(files), fileByTensor, aliases);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    private static Map<String, String> readWeightMap(Path index) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(index));
        } catch (CharacterCodingException e) { // its own message ("Input length = 1") names neither file nor problem
            throw new SafetensorsException(index, "not valid UTF-8", e);
        } catch (JsonProcessingException e) {
            throw new SafetensorsException(index, "not valid JSON: " + e.getOriginalMessage());
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new SafetensorsException(index, "has no \"weight_map\" object");
        }
        Map<String, String> weightMap = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : map.properties()) {
            String shard = e.getValue().isTextual() ? e.getValue().textValue() : "";
            // Shards must be plain file names in the checkpoint directory.
            if (shard.isEmpty() || shard.contains("/") || shard.contains("\\") || shard.startsWith(".")) {
                throw new SafetensorsException(index, "tensor '" + e.getKey() + "' maps to invalid shard name "
                        + e.getValue());
            }
            weightMap.put(e.getKey(), shard);
        }
        if (weightMap.isEmpty()) {
            throw new SafetensorsException(index, "\"weight_map\" is empty");
        }
        return weightMap;
    }

    private static Map<String, SafetensorsFile> indexTensors(List<SafetensorsFile> files) throws SafetensorsException {
        Map<String, SafetensorsFile> fileByTensor = new LinkedHashMap<>();
        for (SafetensorsFile file : files) {
            for (SafetensorsTensor t : file.tensors()) {
                SafetensorsFile previous = fileByTensor.putIfAbsent(t.name(), file);
                if (previous != null) {
                    throw new SafetensorsException(file.path(), "tensor '" + t.name() + "' is also stored in "
                            + previous.path().getFileName());
                }
            }
        }
        return Collections.unmodifiableMap(fileByTensor);
    }

    private static void checkWeightMap(Path index, Map<String, String> weightMap,
                                       Map<String, SafetensorsFile> fileByTensor) throws SafetensorsException {
        for (Map.Entry<String, String> e : weightMap.entrySet()) {
            SafetensorsFile holder = fileByTensor.get(e.getKey());
            if (holder == null || !holder.path().getFileName().toString().equals(e.getValue())) {
                throw new SafetensorsException(index, "tensor '" + e.getKey() + "' is mapped to " + e.getValue()
                        + " but " + (holder == null ? "no shard stores it" : "is stored in "
                        + holder.path().getFileName()));
            }
        }
    }

    private static Map<String, String> findAliases(List<SafetensorsFile> files,
                                                   Map<String, SafetensorsFile> fileByTensor) {
        Map<String, String> aliases = new LinkedHashMap<>();
        for (SafetensorsFile file : files) {
            file.metadata().forEach((key, value) -> {
                if (!fileByTensor.containsKey(key) && fileByTensor.containsKey(value)) {
                    aliases.put(key, value);
                }
            });
        }
        return Collections.unmodifiableMap(aliases);
    }

    private static String otherSafetensorsNote(Path directory) throws IOException {
        try (Stream<Path> list = Files.list(directory)) {
            List<String> others = list.filter(SafetensorsFile::isSafetensors)
                    .map(p -> p.getFileName().toString()).sorted().toList();
            return others.isEmpty() ? " (and no .safetensors files at all)"
                    : " (found " + String.join(", ", others) + " without an index)";
        }
    }

    public Path directory() {
        return directory;
    }

    /** The stored tensors (aliases excluded), file by file in header order. */
    public List<SafetensorsTensor> tensors() {
        return files.stream().flatMap(f -> f.tensors().stream()).toList();
    }

    /** True if {@code name} is stored or is an alias of a stored tensor. */
    public boolean has(String name) {
        return fileByTensor.containsKey(resolve(name));
    }

    /** The stored tensor that {@code name} is an alias of (tied weights), if it is one. */
    public Optional<String> aliasOf(String name) {
        return Optional.ofNullable(aliases.get(name));
    }

    /** Alias name to stored tensor name, for every alias declared in the files' metadata. */
    public Map<String, String> aliases() {
        return aliases;
    }

    /** The tensor stored under {@code name} or under the name it aliases (the info carries the stored name). */
    public Optional<SafetensorsTensor> tensor(String name) {
        SafetensorsFile file = fileByTensor.get(resolve(name));
        return file == null ? Optional.empty() : file.tensor(resolve(name));
    }

    /** The safetensors file holding {@code name} (aliases resolved). */
    public SafetensorsFile fileOf(String name) throws SafetensorsException {
        SafetensorsFile file = fileByTensor.get(resolve(name));
        if (file == null) {
            throw new SafetensorsException(directory, "checkpoint has no tensor named '" + name + "'");
        }
        return file;
    }

    /** See {@link SafetensorsFile#readFloats}; {@code name} may be an alias. */
    public void readFloats(String name, long firstElement, int count, float[] out, int outOffset)
            throws SafetensorsException {
        fileOf(name).readFloats(resolve(name), firstElement, count, out, outOffset);
    }

    /** See {@link SafetensorsFile#release}; {@code name} may be an alias. */
    public void release(String name) throws SafetensorsException {
        fileOf(name).release(resolve(name));
    }

    /** See {@link SafetensorsFile#release(String, long, long)}; {@code name} may be an alias. */
    public void release(String name, long firstElement, long count) throws SafetensorsException {
        fileOf(name).release(resolve(name), firstElement, count);
    }

    private String resolve(String name) {
        return aliases.getOrDefault(name, name);
    }

    /** Unmaps every file. */
    @Override
    public void close() {
        arena.close();
    }
}
