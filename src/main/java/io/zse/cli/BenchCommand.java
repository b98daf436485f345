package io.zse.cli;

import io.zse.backend.KvCache;
import io.zse.backend.Backend;
import io.zse.backend.cuda.CudaBackend;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code zse bench}: load time, time to first token, prefill and decode throughput and peak RSS of a .zse model on the
 * chosen backend (CPU or CUDA), measured after a warm-up run (so JIT compilation is not counted).
 */
@Command(name = "bench", description = "Measure load time, time to first token, prefill and decode speed of a model.")
public final class BenchCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "FILE", description = "The .zse file.")
    Path model;

    @Option(names = "--prompt-tokens", defaultValue = "128", description = "Prompt length (default ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = "--tokens", defaultValue = "128", description = "Tokens to decode (default ${DEFAULT-VALUE}).")
    int decodeTokens;

    @Option(names = "--warmup", defaultValue = "2", description = "Untimed runs first (default ${DEFAULT-VALUE}).")
    int warmupRuns;

    @Mixin
    BackendOption backendOption;

    @Mixin
    DebugOption debug;

    @Spec
    CommandSpec spec;

    /** One measured run. */
    private record Run(double prefillSeconds, double decodeSeconds) {
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        long start = System.nanoTime();
        try (ZseFile file = ZseFile.open(model);
             Backend backend = backendOption.open(file, (long) promptTokens + decodeTokens, promptTokens,
                     spec.commandLine().getErr())) {
            LlamaModel llama = LlamaModel.load(file, backend);
            if (backend instanceof CudaBackend cuda) {
                cuda.finishUploads(); // load time includes the upload
            }
            double loadSeconds = (System.nanoTime() - start) / 1e9;
            int context = llama.config().contextLength();
            int prompt = Math.min(promptTokens, context - 1);
            int decode = Math.min(decodeTokens, context - prompt);
            int[] promptIds = syntheticPrompt(prompt, llama.config().vocabSize());
            for (int i = 0; i < warmupRuns; i++) {
                run(llama, promptIds, decode);
            }
            Run r = run(llama, promptIds, decode);
            out.printf("model            %s%n", model.getFileName());
            out.printf("backend          %s%n", backend instanceof CudaBackend cuda ? cuda.device()
                    : "cpu, " + backendOption.cpuThreads() + " threads");
            out.printf("load             %.1f ms%n", loadSeconds * 1e3);
            out.printf("first token      %.1f ms (prompt of %d tokens)%n", r.prefillSeconds() * 1e3, prompt);
            out.printf("prefill          %.1f tok/s%n", prompt / r.prefillSeconds());
            out.printf("decode           %.1f tok/s (%d tokens)%n", (decode - 1) / r.decodeSeconds(), decode);
            out.printf("peak RSS         %s%n", peakRss());
            return 0;
        }
    }

    /** Prefill then greedy decoding; the first token comes from the prefill, the rest are timed as decode. */
    private static Run run(LlamaModel llama, int[] promptIds, int decode) {
        KvCache cache = llama.newCache(promptIds.length + decode);
        long start = System.nanoTime();
        int token = argmax(llama.forward(promptIds, 0, cache));
        long firstToken = System.nanoTime();
        for (int i = 1; i < decode; i++) {
            token = argmax(llama.forward(new int[]{token}, promptIds.length + i - 1, cache));
        }
        long end = System.nanoTime();
        return new Run((firstToken - start) / 1e9, Math.max(1e-9, (end - firstToken) / 1e9));
    }

    /** Deterministic ids spread over the vocabulary (the speed does not depend on which tokens). */
    private static int[] syntheticPrompt(int length, int vocab) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = (int) ((i * 7919L + 3) % vocab);
        }
        return ids;
    }

    private static int argmax(float[] logits) {
        int best = 0;
        for (int t = 1; t < logits.length; t++) {
            if (logits[t] > logits[best]) {
                best = t;
            }
        }
        return best;
    }

    /** VmHWM of /proc/self/status (Linux); "n/a" elsewhere. */
    private static String peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    return String.format("%.1f MiB", kb / 1024.0);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Not Linux: no peak to report.
        }
        return "n/a";
    }
}
