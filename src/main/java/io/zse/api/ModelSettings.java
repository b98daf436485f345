package io.zse.api;

import io.zse.serve.DemoModel;
import io.zse.serve.EngineLimits;
import io.zse.serve.ModelLoader;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The settings that decide which model the server loads and how: equal settings load the same model the same way,
 * which is what lets a load started before Quarkus ({@link EarlyModelLoad}) stand in for the server's own.
 *
 * @param configured   the model named by zse.model-path; empty for the bundled demo model
 * @param cacheDir     where the demo model and imported models are converted to
 * @param verification when the weights' checksums are checked
 */
record ModelSettings(Optional<Path> configured, Path cacheDir, ModelLoader.Options options,
                     ZseConfig.WeightVerification verification) {

    static ModelSettings of(ZseConfig config) {
        Optional<Path> configured = config.modelPath().map(Path::of);
        String id = config.modelId().orElse(configured.map(ModelLoader::defaultId).orElse(DemoModel.ID));
        EngineLimits limits = new EngineLimits(config.maxRunning(), config.maxQueued(), config.maxModelLen(),
                config.maxBatchTokens());
        return new ModelSettings(configured, Path.of(config.cacheDir()), new ModelLoader.Options(id, config.backend(),
                config.kvCache(), config.threads().orElse(0), limits, config.kvCacheMemory(), config.prefixCache()),
                config.verifyWeights());
    }
}
