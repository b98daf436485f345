package io.zse.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.backend.KvCacheType;
import io.zse.backend.cpu.CpuBackend;
import io.zse.backend.cpu.CpuKernelChoice;
import io.zse.format.UserFiles;
import io.zse.format.ZseFile;
import io.zse.generate.QualityComparison;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.TokenizerSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code zse eval}: the quality cost of a quantized model or KV cache, as {@link QualityComparison} measures it
 * against a reference on a text.
 */
@Command(name = "eval", description = "Compare a model's next-token predictions with a reference's over a text: "
        + "KL divergence, top-1 agreement, perplexity.")
public final class EvalCommand implements Callable<Integer> {
    @Option(names = "--reference", required = true, paramLabel = "FILE",
            description = "The reference model (usually F32 or BF16 weights; any --model form); its KV cache is F32.")
    Path reference;

    @Option(names = "--model", required = true, paramLabel = "MODEL",
            description = "The model to evaluate: .zse, .gguf, zse-engine .zse or checkpoint directory.")
    Path model;

    @Option(names = "--text", required = true, paramLabel = "FILE", description = "UTF-8 text to run both over.")
    Path text;

    @Option(names = "--max-tokens", paramLabel = "N", description = "Evaluate at most N positions (default: the whole text).")
    Integer maxTokens;

    @Mixin
    ThreadsOption threads;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    @Mixin
    KvCacheOption kvCache;

    @Option(names = "--reference-kernels", paramLabel = "KERNELS", description = "CPU kernels of the reference run: "
            + "native, vector or scalar (default: the same as the model's, zse.cpu.kernels). With the same file on both "
            + "sides, --reference-kernels vector measures what the native kernels' int8 activations cost.")
    String referenceKernels;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        KvCacheType kvCacheType = kvCache.type();
        String content = UserFiles.readUtf8(text);
        PrintWriter out = spec.commandLine().getOut();
        try (ZseFile referenceFile = ZseFile.openToRun(ModelFiles.servable(reference, spec.commandLine().getErr()));
             ZseFile modelFile = ZseFile.openToRun(ModelFiles.servable(model, spec.commandLine().getErr()));
             CpuBackend backend = new CpuBackend(threads.count());
             CpuBackend referenceBackend = referenceKernels == null ? null : new CpuBackend(threads.count(),
                     CpuKernelChoice.parse(referenceKernels).kernels(line -> { }))) {
            int[] ids = TokenizerSource.fromZse(referenceFile).encode(content, true);
            QualityComparison.Report r = QualityComparison.compare(
                    new QualityComparison.Side(LlamaModel.load(referenceFile,
                            referenceBackend == null ? backend : referenceBackend), KvCacheType.F32),
                    new QualityComparison.Side(LlamaModel.load(modelFile, backend), kvCacheType),
                    ids, maxTokens != null ? maxTokens : Integer.MAX_VALUE);
            if (json) {
                ObjectMapper mapper = new ObjectMapper();
                ObjectNode o = mapper.createObjectNode();
                o.put("reference", reference.toString());
                o.put("model", model.toString());
                o.put("kv_cache", kvCacheType.label());
                o.put("kernels", backend.kernels().name());
                o.put("reference_kernels", (referenceBackend == null ? backend : referenceBackend).kernels().name());
                o.put("tokens", r.tokens());
                o.put("windows", r.windows());
                o.put("window_length", r.windowLength());
                o.put("kl_mean", r.meanKl());
                o.put("kl_p99", r.p99Kl());
                o.put("kl_max", r.maxKl());
                o.put("top1_agreement", r.top1Agreement());
                o.put("reference_perplexity", r.referencePerplexity());
                o.put("model_perplexity", r.modelPerplexity());
                out.println(mapper.writeValueAsString(o));
            } else {
                out.printf("reference        %s (KV cache f32, %s kernels)%n", reference.getFileName(),
                        (referenceBackend == null ? backend : referenceBackend).kernels().name());
                out.printf("model            %s (KV cache %s, %s kernels)%n", model.getFileName(), kvCacheType.label(),
                        backend.kernels().name());
                out.printf("tokens           %d (%d window%s of at most %d)%n", r.tokens(), r.windows(),
                        r.windows() == 1 ? "" : "s", r.windowLength());
                out.printf("KL mean          %.6f%n", r.meanKl());
                out.printf("KL p99           %.6f%n", r.p99Kl());
                out.printf("KL max           %.6f%n", r.maxKl());
                out.printf("top-1 agreement  %.2f %%%n", 100 * r.top1Agreement());
                out.printf("perplexity       %.4f reference, %.4f model%n", r.referencePerplexity(), r.modelPerplexity());
            }
            out.flush();
        }
        return 0;
    }
}
