package io.zse.cli;

import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.Backend;
import io.zse.backend.ProfiledBackend;
import io.zse.backend.KvCacheType;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.CpuKernelChoice;
import io.zse.backend.cpu.CpuThreads;
import io.zse.backend.cpu.ReadBandwidth;
import io.zse.format.TensorInfo;
import io.zse.generate.Sampler;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.model.ModelConfig;
import io.zse.model.ModelTensors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code zse bench}: load time, time to first token, prefill and decode throughput and peak RSS of a .zse model on the
 * chosen backend (CPU or CUDA), measured after a warm-up run (so JIT compilation is not counted).
 */
@Command(name = "bench", description = "Measure load time, time to first token, prefill and decode speed of a model.")
public final class BenchCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "MODEL",
            description = "A .zse file, a .gguf file, a zse-engine .zse or a checkpoint directory (converted once into the cache).")
    Path model;

    @Option(names = "--prompt-tokens", defaultValue = "128", paramLabel = "N", description = "Prompt length (default ${DEFAULT-VALUE}).")
    int promptTokens;

    @Option(names = "--tokens", defaultValue = "128", paramLabel = "N", description = "Tokens to decode (default ${DEFAULT-VALUE}).")
    int decodeTokens;

    @Option(names = "--warmup", defaultValue = "2", paramLabel = "RUNS", description = "Untimed runs first (default ${DEFAULT-VALUE}).")
    int warmupRuns;

    @Option(names = "--threads", split = ",", paramLabel = "N", hideParamSyntax = true,
            description = "CPU thread counts, comma-separated (1,2), one table row each (default: zse.threads, else all cores).")
    List<Integer> threads;

    @Option(names = "--batch", split = ",", paramLabel = "N", hideParamSyntax = true,
            description = "Also decode N sequences together (comma-separated counts > 1): the decode tok/s of all of "
                    + "them and its ratio to one sequence's, a line each (default: none).")
    List<Integer> batches = List.of();

    @Option(names = "--bandwidth-mb", defaultValue = "512", paramLabel = "MB",
            description = "Buffer read to measure memory bandwidth, the decode roofline; 0 skips it (default ${DEFAULT-VALUE}).")
    int bandwidthMegabytes;

    @Mixin
    BackendOption backendOption;

    @Mixin
    KvCacheOption kvCache;

    @Option(names = "--profile", description = "After the table, the time of each backend op in the measured run's "
            + "prefill and decode and in the --batch steps (products by weight type and shape); on a GPU each op is "
            + "waited for, so its time holds its run on the device, and no step is replayed as a graph.")
    boolean profile;

    @Spec
    CommandSpec spec;

    /** One measured run, with its ops' times per phase when profiled (else empty). */
    private record Run(double prefillSeconds, double decodeSeconds, Map<String, ProfiledBackend.OpTime> prefillOps,
                       Map<String, ProfiledBackend.OpTime> decodeOps) {
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        List<Integer> threadCounts = threads != null ? threads : List.of(CpuThreads.defaultThreads());
        for (int t : threadCounts) {
            requireAtLeast("--threads", t, 1);
        }
        requireAtLeast("--prompt-tokens", promptTokens, 1);
        // The first token comes from the prefill: a decode rate needs at least one more.
        requireAtLeast("--tokens", decodeTokens, 2);
        requireAtLeast("--warmup", warmupRuns, 0);
        requireAtLeast("--bandwidth-mb", bandwidthMegabytes, 0);
        for (int n : batches) {
            requireAtLeast("--batch", n, 2);
        }
        KvCacheType kvCacheType = kvCache.type();
        List<String> rows = new ArrayList<>();
        List<String> profiles = new ArrayList<>();
        List<String> deviceNotes = new ArrayList<>(); // CUDA: the upload's rate, the decode's graph replays
        List<String> batchLines = new ArrayList<>();
        long weightBytes = 0;
        int prompt = 0;
        int decode = 0;
        String device = "cpu";
        long kvBytes = 0;
        Path zse = ModelFiles.servable(model, spec.commandLine().getErr());
        for (int threadCount : threadCounts) {
            long start = System.nanoTime();
            try (ZseFile file = ZseFile.openToRun(zse);
                 Backend opened = backendOption.open(file, (long) promptTokens + decodeTokens, kvCacheType,
                         promptTokens, threadCount, spec.commandLine().getErr())) {
                ProfiledBackend profiled = profile ? new ProfiledBackend(opened) : null;
                Backend backend = profile ? profiled : opened;
                long uploadStart = System.nanoTime();
                LlamaModel llama = LlamaModel.load(file, backend);
                if (opened instanceof CudaBackend cuda) {
                    cuda.finishUploads(); // load time includes the upload
                    double seconds = (System.nanoTime() - uploadStart) / 1e9;
                    deviceNotes.add(String.format("upload %.2f GB/s: %.1f MB of weights from the mapped file in "
                            + "%.1f ms (%s)", cuda.uploadedBytes() / seconds / 1e9, cuda.uploadedBytes() / 1e6,
                            seconds * 1e3, cuda.describeUpload()));
                }
                device = switch (opened) {
                    case CudaBackend cuda -> cuda.device().toString();
                    case CpuBackend cpu -> "cpu (" + cpu.kernels().name() + " kernels)";
                    default -> "cpu";
                };
                double loadSeconds = (System.nanoTime() - start) / 1e9;
                weightBytes = weightBytesPerToken(file, llama.config());
                int context = llama.config().contextLength();
                prompt = Math.min(promptTokens, context - 2); // room left for two tokens, so decode is timed
                decode = Math.min(decodeTokens, context - prompt);
                int[] promptIds = syntheticPrompt(prompt, llama.config().vocabSize());
                for (int i = 0; i < warmupRuns; i++) {
                    run(llama, promptIds, decode, kvCacheType, profiled);
                }
                long replayedBefore = replayedPasses(opened);
                Run r = run(llama, promptIds, decode, kvCacheType, profiled);
                if (opened instanceof CudaBackend) {
                    // a decode step that is not replayed pays a launch per op from the host
                    deviceNotes.add(String.format("decode: %d of %d steps replayed as CUDA graphs",
                            replayedPasses(opened) - replayedBefore, decode - 1));
                }
                if (profile) {
                    profiles.add(opTable(threadCount + " threads, prefill of " + prompt + " tokens",
                            r.prefillOps(), r.prefillSeconds()));
                    profiles.add(opTable(threadCount + " threads, decode of " + (decode - 1) + " tokens",
                            r.decodeOps(), r.decodeSeconds()));
                }
                kvBytes = llama.kvBytesPerPosition(kvCacheType);
                double decodeRate = (decode - 1) / r.decodeSeconds();
                for (int n : batches) {
                    for (int i = 0; i < warmupRuns; i++) {
                        batchDecode(llama, promptIds, decode, n, kvCacheType, profiled);
                    }
                    long batchReplayedBefore = replayedPasses(opened);
                    BatchRun batch = batchDecode(llama, promptIds, decode, n, kvCacheType, profiled);
                    double rate = n * (decode - 1) / batch.seconds();
                    if (profile) {
                        profiles.add(opTable(threadCount + " threads, decode of " + (decode - 1) + " steps of " + n
                                + " sequences together", batch.ops(), batch.seconds()));
                    }
                    String replayed = opened instanceof CudaBackend ? String.format(" (%d of %d steps replayed)",
                            replayedPasses(opened) - batchReplayedBefore, decode - 1) : "";
                    batchLines.add(String.format("%d threads, %d sequences decoded together: %.2f tok/s in all, "
                            + "%.1fx one sequence's%s", threadCount, n, rate, rate / decodeRate, replayed));
                }
                double decodeBandwidth = decodeRate * weightBytes;
                String rss = peakRss(); // before the bandwidth probe, whose buffer would count in the peak
                double roofline = bandwidthMegabytes == 0 ? Double.NaN : bandwidth(threadCount);
                rows.add(String.format("%7d  %7.1f  %8.1f  %13.1f  %12.2f  %9.2f  %9s  %8s  %12s",
                        threadCount, loadSeconds * 1e3, r.prefillSeconds() * 1e3, prompt / r.prefillSeconds(),
                        decodeRate, decodeBandwidth / 1e9, Double.isNaN(roofline) ? "-" : String.format("%.2f", roofline / 1e9),
                        Double.isNaN(roofline) ? "-" : String.format("%.0f %%", 100 * decodeBandwidth / roofline),
                        rss));
            }
        }
        out.printf("model %s on %s: %.1f MB of weights read per decoded token; prompt %d tokens, %d decoded%n",
                model.getFileName(), device, weightBytes / 1e6, prompt, decode);
        out.printf("KV cache %s (%d bytes per token)%n", kvCacheType.label(), kvBytes);
        out.println("threads  load ms  TTFT ms  prefill tok/s  decode tok/s  decode GB/s  read GB/s  roofline  peak RSS MiB");
        rows.forEach(out::println);
        batchLines.forEach(out::println);
        deviceNotes.forEach(out::println);
        profiles.forEach(out::print);
        out.flush(); // print() does not flush a PrintWriter, and the process exits next
        return 0;
    }

    /** One phase's ops, longest first, with what the ops do not account for (sampling, the forward pass's own work). */
    private static String opTable(String phase, Map<String, ProfiledBackend.OpTime> ops, double seconds) {
        StringBuilder table = new StringBuilder(String.format("%n%s: %.1f ms%n", phase, seconds * 1e3));
        table.append(String.format("%-40s %8s %10s %7s%n", "op", "calls", "ms", "share"));
        long accounted = 0;
        List<Map.Entry<String, ProfiledBackend.OpTime>> sorted = new ArrayList<>(ops.entrySet());
        sorted.sort((a, b) -> Long.compare(b.getValue().nanos(), a.getValue().nanos()));
        for (Map.Entry<String, ProfiledBackend.OpTime> op : sorted) {
            accounted += op.getValue().nanos();
            table.append(String.format("%-40s %8d %10.1f %6.1f%%%n", op.getKey(), op.getValue().calls(),
                    op.getValue().nanos() / 1e6, 100 * op.getValue().nanos() / 1e9 / seconds));
        }
        double rest = seconds - accounted / 1e9;
        table.append(String.format("%-40s %8s %10.1f %6.1f%%%n", "(outside the ops)", "", rest * 1e3, 100 * rest / seconds));
        return table.toString();
    }

    private void requireAtLeast(String option, int value, int least) {
        if (value < least) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    option + " must be at least " + least + ", not " + value);
        }
    }

    /**
     * Bytes a decode step streams from the weights: every matrix once, the embedding table only when it doubles as
     * the output projection (otherwise one row of it is read).
     */
    private static long weightBytesPerToken(ZseFile file, ModelConfig config) {
        long bytes = 0;
        for (TensorInfo t : file.tensors()) {
            if (!t.name().equals(ModelTensors.EMBEDDINGS) || config.tieWordEmbeddings()) {
                bytes += t.dataLength() + t.scalesLength();
            }
        }
        return bytes;
    }

    /** Read bandwidth with this many threads: what decoding would reach if it were purely memory-bound. */
    private double bandwidth(int threadCount) {
        try (CpuThreads pool = new CpuThreads(threadCount)) {
            return ReadBandwidth.measure(pool, CpuKernelChoice.selected(), (long) bandwidthMegabytes << 20, 5);
        }
    }

    /**
     * Prefill then greedy decoding; the first token comes from the prefill, the rest are timed as decode, each drawn
     * where the logits are (on a GPU only the id comes back, as in the server; the whole logits row to the host for an
     * argmax there took part of every step's time before).
     */
    private static Run run(LlamaModel llama, int[] promptIds, int decode, KvCacheType kvCacheType,
                           ProfiledBackend profiled) {
        KvCache cache = llama.newCache(promptIds.length + decode, kvCacheType);
        if (profiled != null) {
            profiled.takeTimes(); // the cache's set-up is not part of either phase
        }
        long start = System.nanoTime();
        int token = Sampler.argmax(llama.forward(promptIds, 0, cache));
        long firstToken = System.nanoTime();
        Map<String, ProfiledBackend.OpTime> prefillOps = profiled == null ? Map.of() : profiled.takeTimes();
        KvCache[] caches = {cache};
        for (int i = 1; i < decode; i++) {
            token = llama.decodeBatchGreedy(new int[]{token}, caches)[0];
        }
        long end = System.nanoTime();
        Map<String, ProfiledBackend.OpTime> decodeOps = profiled == null ? Map.of() : profiled.takeTimes();
        return new Run((firstToken - start) / 1e9, Math.max(1e-9, (end - firstToken) / 1e9), prefillOps, decodeOps);
    }

    /** Passes the backend has replayed as CUDA graphs so far (none off CUDA). */
    private static long replayedPasses(Backend backend) {
        return backend instanceof CudaBackend cuda ? cuda.replayedPasses() : 0;
    }

    /** The decode steps of a batch: their time, and their ops' times when profiled (else empty). */
    private record BatchRun(double seconds, Map<String, ProfiledBackend.OpTime> ops) {
    }

    /**
     * {@code n} sequences with the same prompt, their caches in one block pool as the server's, then greedy decode
     * steps of all of them together (each step reads the weights once for the n tokens; on CUDA, one recorded graph,
     * unless profiled): the time of those steps.
     */
    private static BatchRun batchDecode(LlamaModel llama, int[] promptIds, int decode, int n,
                                        KvCacheType kvCacheType, ProfiledBackend profiled) {
        int positions = promptIds.length + decode;
        int blocks = n * ((positions + KvCache.DEFAULT_BLOCK_SIZE - 1) / KvCache.DEFAULT_BLOCK_SIZE);
        try (Arena arena = Arena.ofShared()) {
            KvBlockPool pool = llama.newPool(kvCacheType, KvCache.DEFAULT_BLOCK_SIZE, blocks, arena);
            KvCache[] caches = new KvCache[n];
            int[] tokens = new int[n];
            for (int i = 0; i < n; i++) {
                caches[i] = new KvCache(pool, positions);
                tokens[i] = Sampler.argmax(llama.forward(promptIds, 0, caches[i]));
            }
            if (profiled != null) {
                profiled.takeTimes(); // the prompts are not part of the steps
            }
            long start = System.nanoTime();
            for (int step = 1; step < decode; step++) {
                tokens = llama.decodeBatchGreedy(tokens, caches);
            }
            double seconds = Math.max(1e-9, (System.nanoTime() - start) / 1e9);
            return new BatchRun(seconds, profiled == null ? Map.of() : profiled.takeTimes());
        }
    }

    /** Deterministic ids spread over the vocabulary (the speed does not depend on which tokens). */
    private static int[] syntheticPrompt(int length, int vocab) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = (int) ((i * 7919L + 3) % vocab);
        }
        return ids;
    }

    /** VmHWM of /proc/self/status in MiB (Linux); "n/a" elsewhere. Peak of the whole process so far. */
    private static String peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    long kb = Long.parseLong(line.replaceAll("[^0-9]", ""));
                    return String.format("%.1f", kb / 1024.0);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Not Linux: no peak to report.
        }
        return "n/a";
    }
}
