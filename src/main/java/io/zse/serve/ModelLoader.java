package io.zse.serve;

import io.micrometer.core.instrument.MeterRegistry;
import io.zse.backend.Backend;
import io.zse.backend.BackendChoice;
import io.zse.backend.BackendSelector;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCacheType;
import io.zse.backend.MemoryFootprint;
import io.zse.backend.cpu.CpuThreads;
import io.zse.format.SectionKind;
import io.zse.format.ZseFile;
import io.zse.model.LlamaModel;
import io.zse.model.ModelConfig;
import io.zse.model.ModelFootprint;
import io.zse.tokenizer.Tokenizer;
import io.zse.tokenizer.TokenizerConfig;
import io.zse.tokenizer.TokenizerSource;
import io.zse.tokenizer.template.ChatTemplate;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.logging.Logger;

/** Opens a .zse file and builds everything a {@link LoadedModel} holds. */
public final class ModelLoader {
    private static final Logger LOG = Logger.getLogger(ModelLoader.class.getName());

    /**
     * What to load and how.
     *
     * @param backend auto, cpu, cuda or cuda:N
     * @param kvCache the KV cache element type: f32, f16 or int8
     * @param threads CPU threads, 0 for all cores
     * @param kvCacheMemory the KV pool's size: bytes or a share of free memory ({@link KvMemorySetting})
     * @param prefixCache   whether sequences share the cached blocks of common prompt prefixes
     */
    public record Options(String id, String backend, String kvCache, int threads, EngineLimits limits,
                          String kvCacheMemory, boolean prefixCache) {
    }

    private ModelLoader() {
    }

    public static LoadedModel load(Path path, Options options, MeterRegistry registry) throws IOException {
        BackendChoice choice = BackendChoice.parse(options.backend());
        KvCacheType kvCacheType = KvCacheType.parse(options.kvCache());
        ZseFile file = ZseFile.openToRun(path);
        Backend backend = null;
        try {
            ModelConfig config = ModelConfig.fromJson(file.configJson());
            int length = options.limits().maxModelLength() == 0 ? config.contextLength()
                    : Math.min(config.contextLength(), options.limits().maxModelLength());
            long bytesPerToken = KvBlockPool.bytesPerToken(kvCacheType, config.numLayers(), config.numKvHeads(),
                    config.headDim());
            long kvBytes = KvMemorySetting.bytes(options.kvCacheMemory(),
                    (long) length * options.limits().maxRunning() * bytesPerToken);
            // Room for the whole KV pool: a device that cannot hold it is not chosen.
            MemoryFootprint footprint = ModelFootprint.of(file, config, kvBytes / bytesPerToken,
                    Math.max(options.limits().maxRunning(), options.limits().maxBatchTokens()), kvCacheType);
            backend = new BackendSelector(LOG::info).select(choice, Optional.of(footprint),
                    options.threads() > 0 ? options.threads() : CpuThreads.defaultThreads());
            LlamaModel model = LlamaModel.load(file, backend);
            Tokenizer tokenizer = TokenizerSource.fromZse(file);
            TokenizerConfig tokenizerConfig = file.sectionBytes(SectionKind.TOKENIZER_CONFIG).map(TokenizerConfig::parse)
                    .orElse(new TokenizerConfig(null, null, null));
            Optional<ChatTemplate> own = tokenizerConfig.compiledChatTemplate();
            BatchingEngine engine = new BatchingEngine(model, tokenizer, options.limits(),
                    new KvPoolSettings(kvCacheType, kvBytes, KvPoolSettings.DEFAULT_BLOCK_SIZE, options.prefixCache()),
                    new EngineMetrics(registry));
            WeightVerifier weights = new WeightVerifier(file,
                    () -> engine.runningSequences() + engine.queuedSequences() > 0);
            return new LoadedModel(options.id(), file, backend, model, tokenizer, tokenizerConfig,
                    own.orElseGet(() -> ChatTemplate.compile(LoadedModel.FALLBACK_TEMPLATE)), own.isPresent(), engine,
                    weights, System.currentTimeMillis() / 1000);
        } catch (IOException | RuntimeException e) {
            if (backend != null) {
                backend.close();
            }
            file.close();
            throw e;
        }
    }

    /** The id a model gets when none is configured: its file or directory name without {@code .zse} / {@code .gguf}. */
    public static String defaultId(Path path) {
        String name = path.toAbsolutePath().normalize().getFileName().toString();
        return name.replaceFirst("\\.(zse|gguf)$", "");
    }
}
