package io.zse.bench.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.model.functions.Generator;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.safetensors.SafeTensorSupport;
import com.github.tjake.jlama.safetensors.prompt.PromptContext;
import com.github.tjake.jlama.tensor.operations.TensorOperationsProvider;
import com.github.tjake.jlama.util.PhysicalCoreExecutor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Jlama measured the way {@code zse bench} measures zse, so the two tables sit side by side (bench/jlama.sh builds and
 * runs this). Three commands:
 * <pre>
 *   bench DIR [--threads N] [--prompt-tokens N] [--tokens N] [--warmup N]   load, TTFT, prefill, decode, peak RSS
 *   first-token DIR [--threads N] [--prompt TEXT]                          load and generate one token, then exit
 *   quantize DIR OUT_DIR                                                   Jlama's offline Q4 (quantizeModel)
 * </pre>
 * Working memory is F32 with I8 activations for quantized weights: the defaults of Jlama's own CLI.
 */
public final class JlamaBench {
    private static final Set<String> BENCH_OPTIONS = Set.of("--threads", "--prompt-tokens", "--tokens", "--warmup");
    private static final Set<String> FIRST_TOKEN_OPTIONS = Set.of("--threads", "--prompt");

    private JlamaBench() {
    }

    public static void main(String[] args) throws IOException {
        try {
            if (args.length < 2) {
                throw new IllegalArgumentException("usage: bench|first-token|quantize MODEL_DIR [options]");
            }
            Path dir = modelDir(args[1]);
            switch (args[0]) {
                case "bench" -> bench(dir, options(args, BENCH_OPTIONS));
                case "first-token" -> firstToken(dir, options(args, FIRST_TOKEN_OPTIONS));
                case "quantize" -> quantize(dir, args);
                default -> throw new IllegalArgumentException("unknown command " + args[0]
                        + " (expected bench, first-token or quantize)");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("jlama-bench: " + e.getMessage());
            System.exit(2);
        }
        // Jlama's thread pool is not daemon: leave without waiting for it.
        System.exit(0);
    }

    private static void bench(Path dir, Map<String, String> options) {
        int threads = intOption(options, "--threads", 2);
        int promptTokens = intOption(options, "--prompt-tokens", 128);
        int decodeTokens = intOption(options, "--tokens", 128);
        int warmupRuns = intOption(options, "--warmup", 2);
        PhysicalCoreExecutor.overrideThreadCount(threads);

        long start = System.nanoTime();
        AbstractModel model = ModelSupport.loadModel(dir.toFile(), DType.F32, DType.I8);
        double loadMs = (System.nanoTime() - start) / 1e6;

        int context = model.getConfig().contextLength;
        int prompt = Math.min(promptTokens, context - 1);
        int decode = Math.min(decodeTokens, context - prompt);
        TimedGeneration generation = new TimedGeneration(model, prompt, decode);
        for (int i = 0; i < warmupRuns; i++) {
            generation.run();
        }
        TimedGeneration.Run r = generation.run();

        long weightBytes = WeightBytes.perDecodedToken(model.getWeights());
        double decodeRate = (decode - 1) / r.decodeSeconds();
        System.out.printf("model %s (Jlama 0.8.4, %s weights, %s): %.1f MB of weights read per decoded token;"
                        + " prompt %d tokens, %d decoded%n", dir.getFileName(), model.getWeights().getModelDType(),
                TensorOperationsProvider.get().name(), weightBytes / 1e6, prompt, decode);
        System.out.println("threads  load ms  TTFT ms  prefill tok/s  decode tok/s  decode GB/s  peak RSS MiB");
        System.out.printf("%7d  %7.1f  %7.1f  %13.1f  %12.2f  %11.2f  %12s%n", threads, loadMs,
                r.prefillSeconds() * 1e3, prompt / r.prefillSeconds(), decodeRate, decodeRate * weightBytes / 1e9,
                PeakRss.mebibytes());
    }

    /** What a user of Jlama's API does for one answer: load, then generate() with greedy sampling, one token. */
    private static void firstToken(Path dir, Map<String, String> options) {
        PhysicalCoreExecutor.overrideThreadCount(intOption(options, "--threads", 2));
        AbstractModel model = ModelSupport.loadModel(dir.toFile(), DType.F32, DType.I8);
        PromptContext prompt = PromptContext.of(options.getOrDefault("--prompt", "Hello"));
        // generate() counts the prompt in its token budget: a budget of exactly the prompt yields the one token
        // sampled from the prefill.
        int budget = model.encodePrompt(prompt).length;
        Generator.Response response = model.generate(UUID.randomUUID(), prompt, 0.0f, budget, (text, ms) -> { });
        System.out.println(response.responseTextWithSpecialTokens);
    }

    private static void quantize(Path dir, String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: quantize MODEL_DIR OUT_DIR");
        }
        Path out = Path.of(args[2]);
        if (Files.exists(out)) {
            throw new IllegalArgumentException(out + " already exists");
        }
        // quantizeModel copies a README.md along with the weights and fails without one; a directory of links
        // plus a README gives it one without touching the source directory.
        Path staging = Files.createTempDirectory(out.toAbsolutePath().getParent(), "jlama-staging-");
        try {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.createSymbolicLink(staging.resolve(f.getFileName()), f.toAbsolutePath());
                }
            }
            if (!Files.exists(staging.resolve("README.md"))) {
                Files.writeString(staging.resolve("README.md"), "Quantized by bench/jlama.sh from " + dir + "\n");
            }
            Path written = SafeTensorSupport.quantizeModel(staging, DType.Q4, null, null, Optional.of(out));
            System.out.println("Jlama Q4 model written to " + written);
        } finally {
            try (Stream<Path> links = Files.list(staging)) {
                for (Path link : (Iterable<Path>) links::iterator) {
                    Files.delete(link);
                }
            }
            Files.delete(staging);
        }
    }

    private static Path modelDir(String arg) {
        Path dir = Path.of(arg);
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
            throw new IllegalArgumentException(dir + " is not a Hugging Face model directory (no config.json)");
        }
        return dir;
    }

    private static Map<String, String> options(String[] args, Set<String> known) {
        Map<String, String> options = new HashMap<>();
        List<String> rest = List.of(args).subList(2, args.length);
        for (int i = 0; i < rest.size(); i += 2) {
            String name = rest.get(i);
            if (!known.contains(name)) {
                throw new IllegalArgumentException("unknown option " + name + " (expected one of " + known + ")");
            }
            if (i + 1 >= rest.size()) {
                throw new IllegalArgumentException(name + " needs a value");
            }
            options.put(name, rest.get(i + 1));
        }
        return options;
    }

    private static int intOption(Map<String, String> options, String name, int defaultValue) {
        String value = options.get(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(value);
            if (n < 1) {
                throw new IllegalArgumentException(name + " must be at least 1, not " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, not " + value);
        }
    }
}
