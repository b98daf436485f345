package io.zse.serve;

import io.micrometer.core.instrument.MeterRegistry;
import io.zse.backend.cpu.CpuBackend;
import io.zse.format.SectionKind;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.TokenizerSource;
import io.zse.tokenizer.template.ChatTemplate;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/** Opens a .zse file and builds everything a {@link LoadedModel} holds. */
public final class ModelLoader {
    /**
     * What to load and how.
     *
     * @param backend the compute backend's name; only "cpu" exists so far (the CUDA backend plugs in here)
     * @param kvCache the KV cache element type; only "f32" exists so far
     * @param threads CPU threads, 0 for all cores
     */
    public record Options(String id, String backend, String kvCache, int threads, EngineLimits limits) {
    }

    private ModelLoader() {
    }

    public static LoadedModel load(Path path, Options options, MeterRegistry registry) throws IOException {
        if (!options.backend().equalsIgnoreCase("cpu")) {
            throw new IllegalArgumentException("backend '" + options.backend() + "' is not available (this build has: cpu)");
        }
        if (!options.kvCache().equalsIgnoreCase("f32")) {
            throw new IllegalArgumentException("KV cache type '" + options.kvCache() + "' is not available (this build has: f32)");
        }
        ZseFile file = ZseFile.open(path);
        CpuBackend backend = null;
        try {
            backend = options.threads() > 0 ? new CpuBackend(options.threads()) : new CpuBackend();
            LlamaModel model = LlamaModel.load(file, backend);
            Tokenizer tokenizer = TokenizerSource.fromZse(file);
            TokenizerConfig tokenizerConfig = file.sectionBytes(SectionKind.TOKENIZER_CONFIG).map(TokenizerConfig::parse)
                    .orElse(new TokenizerConfig(null, null, null));
            Optional<ChatTemplate> own = tokenizerConfig.compiledChatTemplate();
            BatchingEngine engine = new BatchingEngine(model, tokenizer, options.limits(), new EngineMetrics(registry));
            return new LoadedModel(options.id(), file, backend, model, tokenizer, tokenizerConfig,
                    own.orElseGet(() -> ChatTemplate.compile(LoadedModel.FALLBACK_TEMPLATE)), own.isPresent(), engine,
                    System.currentTimeMillis() / 1000);
        } catch (IOException | RuntimeException e) {
            if (backend != null) {
                backend.close();
            }
            file.close();
            throw e;
        }
    }

    /** The id a model gets when none is configured: its file name without {@code .zse}. */
    public static String defaultId(Path path) {
        String name = path.getFileName().toString();
        return name.endsWith(".zse") ? name.substring(0, name.length() - 4) : name;
    }
}
