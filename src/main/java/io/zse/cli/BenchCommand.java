package io.zse.cli;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.CpuThreads;
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
 * CPU backend, measured after a warm-up run (so JIT compilation is not counted).
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

    @Option(names = "--threads", description = "CPU threads (default: zse.threads, else all cores).")
    Integer threads;

    @Mixin
    KvCacheOption kvCache;

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
        int threadCount = threads != null ? threads : CpuThreads.defaultThreads();
        KvCacheType kvCacheType = kvCache.type();
        long start = System.nanoTime();
        try (ZseFile file = ZseFile.open(model); CpuBackend backend = new CpuBackend(threadCount)) {
            LlamaModel llama = LlamaModel.load(file, backend);
            double loadSeconds = (System.nanoTime() - start) / 1e9;
            int context = llama.config().contextLength();
            int prompt = Math.min(promptTokens, context - 1);
            int decode = Math.min(decodeTokens, context - prompt);
            int[] promptIds = syntheticPrompt(prompt, llama.config().vocabSize());
            for (int i = 0; i < warmupRuns; i++) {
                run(llama, promptIds, decode, kvCacheType);
            }
            Run r = run(llama, promptIds, decode, kvCacheType);
            out.printf("model            %s%n", model.getFileName());
            out.printf("threads          %d%n", threadCount);
            out.printf("KV cache         %s (%d bytes per token)%n", kvCacheType.label(),
                    llama.newCache(1, kvCacheType).bytesPerPosition());
            out.printf("load             %.1f ms%n", loadSeconds * 1e3);
            out.printf("first token      %.1f ms (prompt of %d tokens)%n", r.prefillSeconds() * 1e3, prompt);
            out.printf("prefill          %.1f tok/s%n", prompt / r.prefillSeconds());
            out.printf("decode           %.1f tok/s (%d tokens)%n", (decode - 1) / r.decodeSeconds(), decode);
            out.printf("peak RSS         %s%n", peakRss());
            return 0;
        }
    }

    /** Prefill then greedy decoding; the first token comes from the prefill, the rest are timed as decode. */
    private static Run run(LlamaModel llama, int[] promptIds, int decode, KvCacheType kvCacheType) {
        KvCache cache = llama.newCache(promptIds.length + decode, kvCacheType);
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
