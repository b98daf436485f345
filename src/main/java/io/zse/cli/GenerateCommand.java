package io.zse.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.backend.Backend;
import io.zse.backend.KvCacheType;
import io.zse.backend.cuda.CudaBackend;
import io.zse.backend.cuda.CudaProbe;
import io.zse.format.SectionKind;
import io.zse.format.ZseFile;
import io.zse.generate.Generator;
import io.zse.generate.Sampler;
import io.zse.generate.SamplingParameters;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.TokenizerSource;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code zse generate}: complete a prompt (or answer it as a chat message) and stream the text to stdout. */
@Command(name = "generate", description = "Generate text from a .zse model (CPU or CUDA).")
public final class GenerateCommand implements Callable<Integer> {
    @Option(names = "--model", required = true, paramLabel = "MODEL",
            description = "A .zse file, a .gguf file, a zse-engine .zse or a checkpoint directory (converted once into the cache).")
    Path model;

    @Option(names = "--prompt", required = true, paramLabel = "TEXT", description = "The prompt.")
    String prompt;

    @Option(names = "--chat", description = "Render the prompt as a user message through the model's chat template.")
    boolean chat;

    @Option(names = "--max-tokens", defaultValue = "128", paramLabel = "N", description = "Default ${DEFAULT-VALUE}.")
    int maxTokens;

    @Mixin
    SamplingOptions sampling;

    @Option(names = "--stop", paramLabel = "TEXT", description = "Stop before this text (repeatable).")
    List<String> stops = List.of();

    @Option(names = "--json", description = "Print one JSON object: prompt_ids, ids, text, finish_reason.")
    boolean json;

    @Option(names = "--logprobs", paramLabel = "N",
            description = "Each generated token's log-probability and its N most likely alternatives (0..20): in the "
                    + "JSON with --json, else as a table after the text.")
    Integer logprobs;

    @Option(names = "--verify-weights",
            description = "Check every tensor's checksum before generating (reads all weight bytes once).")
    boolean verifyWeights;

    @Option(names = "--timings",
            description = "After the text, on stderr: the milliseconds from process start to the file opened, the "
                    + "backend ready, the model loaded, the tokenizer ready and the first token (on CUDA also the "
                    + "device probe done and the weights copied out of the file); then the decode rate.")
    boolean timings;

    @Mixin
    ThreadsOption threads;

    @Mixin
    BackendOption backendOption;

    @Mixin
    KvCacheOption kvCache;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        KvCacheType kvCacheType = kvCache.type(); // a bad value fails before the model is opened
        SamplingParameters parameters = sampling.parameters().withTopLogprobs(logprobs != null ? logprobs : 0);
        PrintWriter out = spec.commandLine().getOut();
        StartupTimings marks = new StartupTimings(timings);
        try (ZseFile file = ZseFile.openToRun(ModelFiles.servable(model, spec.commandLine().getErr()))) {
            marks.mark("file open");
            if (verifyWeights) {
                file.verify(); // open() checked only the metadata; a damaged tensor fails here, named
            }
            String text = chat ? chatPrompt(file) : prompt;
            // A large vocabulary takes a second to load: it loads on another thread while the backend and model load.
            CompletableFuture<Tokenizer> tokenizer = CompletableFuture.supplyAsync(() -> loadTokenizer(file));
            // Every token holds at least one byte of the text (plus BOS/EOS): a bound for the memory check.
            int promptBound = text.getBytes(StandardCharsets.UTF_8).length + 2;
            try (Backend backend = backendOption.open(file, (long) promptBound + maxTokens, kvCacheType, promptBound,
                    threads.count(), spec.commandLine().getErr())) {
                marks.mark("backend ready");
                LlamaModel llama = LlamaModel.load(file, backend);
                marks.mark("model loaded");
                Tokenizer loaded = join(tokenizer);
                marks.mark("tokenizer ready");
                int[] promptIds = chat ? loaded.encode(text, false) : loaded.encode(text, true);
                generate(llama, loaded, promptIds, parameters, kvCacheType, out, marks);
                if (backend instanceof CudaBackend cuda) { // what the CUDA start's threads did meanwhile
                    CudaProbe.earlyProbeFinished().ifPresent(at -> marks.markAt("CUDA probe done", at));
                    cuda.weightsIssuedAt().ifPresent(at -> marks.markAt("weights copied out", at));
                }
            } finally {
                tokenizer.exceptionally(e -> null).join(); // the file must stay open until the loader is done with it
            }
        }
        marks.print(spec.commandLine().getErr());
        return 0;
    }

    private static Tokenizer loadTokenizer(ZseFile file) {
        try {
            return TokenizerSource.fromZse(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The loaded tokenizer, or the loader's own exception (not wrapped), so the one-line error names it. */
    private static Tokenizer join(CompletableFuture<Tokenizer> tokenizer) throws IOException {
        try {
            return tokenizer.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof UncheckedIOException io) {
                throw io.getCause();
            }
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    private void generate(LlamaModel llama, Tokenizer tokenizer, int[] promptIds, SamplingParameters parameters,
                          KvCacheType kvCacheType, PrintWriter out, StartupTimings marks) throws Exception {
        int room = llama.config().contextLength() - promptIds.length;
        if (maxTokens > room && room > 0) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("zse generate: --max-tokens " + maxTokens + " cut to " + room + ": the prompt has "
                    + promptIds.length + " of the " + llama.config().contextLength() + " tokens the context holds");
            err.flush();
        }
        Generator generator = new Generator(llama, tokenizer, llama.config().eosTokenIds(), kvCacheType);
        Generator.Result result = generator.generate(promptIds, maxTokens, parameters,
                sampling.seedOrClock(), stops, piece -> {
                    marks.text();
                    if (!json) {
                        out.print(piece);
                        out.flush();
                    }
                });
        marks.finished(result.ids().length);
        if (json) {
            ObjectMapper mapper = new ObjectMapper();
            ObjectNode o = mapper.createObjectNode();
            o.putPOJO("prompt_ids", result.promptIds());
            o.putPOJO("ids", result.ids());
            o.put("text", result.text());
            o.put("finish_reason", result.finishReason());
            if (logprobs != null) {
                ArrayNode tokens = o.putArray("logprobs");
                for (Sampler.Choice choice : result.choices()) {
                    ObjectNode t = tokens.addObject();
                    t.put("id", choice.token());
                    t.put("token", tokenizer.decode(new int[]{choice.token()}, false));
                    t.put("logprob", choice.logprob());
                    ArrayNode top = t.putArray("top_logprobs");
                    for (Sampler.TokenLogprob alternative : choice.top()) {
                        top.addObject().put("id", alternative.token())
                                .put("token", tokenizer.decode(new int[]{alternative.token()}, false))
                                .put("logprob", alternative.logprob());
                    }
                }
            }
            out.println(mapper.writeValueAsString(o));
        } else {
            out.println();
            if (logprobs != null) {
                LogprobsTable.print(result.choices(), logprobs, tokenizer, out);
            }
        }
        out.flush();
    }

    private String chatPrompt(ZseFile file) {
        TokenizerConfig config = file.sectionBytes(SectionKind.TOKENIZER_CONFIG).map(TokenizerConfig::parse)
                .orElseThrow(() -> new IllegalArgumentException(model + " has no tokenizer_config.json: no chat template"));
        return config.compiledChatTemplate()
                .orElseThrow(() -> new IllegalArgumentException(model + " has no chat template (it is not a chat model)"))
                .render(List.of(Map.of("role", "user", "content", prompt)), null, true, config.bosToken(),
                        config.eosToken(), Map.of());
    }
}
