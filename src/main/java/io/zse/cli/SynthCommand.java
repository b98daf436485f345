package io.zse.cli;

import io.zse.convert.ModelPreset;
import io.zse.convert.SafetensorsDtype;
import io.zse.convert.SyntheticCheckpointWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/** {@code zse synth}: writes a Hugging Face checkpoint with random weights in the shape of a real model. */
@Command(name = "synth",
        description = "Write a Hugging Face checkpoint with random weights of a real model's shape "
                + "(presets: llama-3.2-1b, qwen2.5-0.5b, qwen3-0.6b, phi-3-mini-4k, gemma-2-2b, gemma-3-1b, "
                + "tinyllama-1.1b, llama-3-8b, bitnet-b1.58-2b-4t).")
public final class SynthCommand implements Callable<Integer> {

    @Option(names = "--preset", required = true, paramLabel = "NAME", description = "Model shape to copy.")
    String preset;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "DIR", description = "Output checkpoint directory.")
    Path output;

    @Option(names = "--dtype", defaultValue = "bf16", paramLabel = "TYPE", description = "Weight type: bf16, f16 or f32 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--seed", defaultValue = "0", paramLabel = "S", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--layers", paramLabel = "N", description = "Number of decoder layers instead of the model's own.")
    Integer layers;

    @Option(names = "--shards", defaultValue = "1", paramLabel = "N", description = "Number of safetensors files (default: ${DEFAULT-VALUE}).")
    int shards;

    @Option(names = "--tokenizer", paramLabel = "DIR", description = "Folder with tokenizer.json to copy (default: the shared tokenizer of the preset's vocabulary).")
    Path tokenizer;

    @Option(names = "--force", description = "Write into an existing non-empty output directory.")
    boolean force;

    /** Test hook: overrides config.json values (e.g. vocab_size=256) to make small checkpoints of a preset's layout. */
    @Option(names = "--set", hidden = true)
    Map<String, String> configOverrides = new LinkedHashMap<>();

    @Override
    public Integer call() throws IOException {
        ModelPreset model = ModelPreset.byId(preset);
        SafetensorsDtype type = SafetensorsDtype.parse(dtype);
        Map<String, Object> config = model.config();
        if (layers != null) {
            if (layers < 1) {
                throw new IllegalArgumentException("--layers must be at least 1, got " + layers);
            }
            config.put("num_hidden_layers", layers);
        }
        configOverrides.forEach((key, value) -> config.put(key, parseConfigValue(value)));
        Path tokenizerDir = tokenizer != null ? tokenizer : findSharedTokenizer(model);
        if (!Files.isRegularFile(tokenizerDir.resolve("tokenizer.json"))) {
            throw new IOException("no tokenizer.json in " + tokenizerDir);
        }
        prepareOutput();
        new SyntheticCheckpointWriter(config, type, seed, shards, tokenizerDir, System.err).write(output);
        return 0;
    }

    private void prepareOutput() throws IOException {
        if (Files.exists(output) && !Files.isDirectory(output)) {
            throw new IOException(output + " exists and is not a directory");
        }
        if (Files.isDirectory(output)) {
            List<Path> existing;
            try (Stream<Path> list = Files.list(output)) {
                existing = list.toList();
            }
            if (!existing.isEmpty() && !force) {
                throw new IOException(output + " is not empty (pass --force to write into it)");
            }
            // Stale shards of an earlier run would otherwise mix with the new checkpoint.
            for (Path p : existing) {
                if (p.getFileName().toString().startsWith("model") && p.getFileName().toString().contains(".safetensors")) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(output);
    }

    /** Looks for shared/tokenizers/NAME next to or inside the current directory and the repository root. */
    static Path findSharedTokenizer(ModelPreset model) throws IOException {
        Set<Path> bases = new LinkedHashSet<>();
        Path cwd = Path.of("").toAbsolutePath();
        bases.add(cwd);
        repositoryRoot(cwd).ifPresent(bases::add);
        codeLocation().flatMap(SynthCommand::repositoryRoot).ifPresent(bases::add);
        List<Path> tried = new ArrayList<>();
        for (Path base : bases) {
            for (Path candidate : List.of(base.resolve("../shared/tokenizers"), base.resolve("shared/tokenizers"))) {
                Path dir = candidate.resolve(model.tokenizerFolder()).normalize();
                tried.add(dir);
                if (Files.isRegularFile(dir.resolve("tokenizer.json"))) {
                    return dir;
                }
            }
        }
        throw new IOException("no " + model.tokenizerFolder() + " tokenizer found for " + model.id()
                + " (looked in " + tried + "); pass --tokenizer <dir>");
    }

    /** The nearest ancestor holding the Maven wrapper. */
    private static Optional<Path> repositoryRoot(Path from) {
        for (Path p = from; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("mvnw")) && Files.isRegularFile(p.resolve("pom.xml"))) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> codeLocation() {
        try {
            return Optional.of(Path.of(SynthCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private static Object parseConfigValue(String value) {
        if (value.equals("true") || value.equals("false")) {
            return Boolean.parseBoolean(value);
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException notInt) {
            try {
                return Double.parseDouble(value);
            } catch (NumberFormatException notNumber) {
                return value;
            }
        }
    }
}
