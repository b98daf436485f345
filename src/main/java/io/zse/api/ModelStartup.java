package io.zse.api;

import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.zse.convert.ModelConverter;
import io.zse.convert.ModelImport;
import io.zse.serve.DemoModel;
import io.zse.serve.LoadedModel;
import io.zse.serve.ModelLoader;
import io.zse.serve.WeightVerifier;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.file.Path;

/** Brings the server's model up from its settings: converts what needs it, loads it, checks its weights if asked. */
final class ModelStartup {
    private static final Logger LOG = Logger.getLogger(ModelStartup.class);

    /**
     * A model ready to serve, the file it was loaded from, and how long that took.
     *
     * @param meters where the model's meters are: the load may start before the server's registry exists, which then
     *               joins this one
     */
    record Loaded(LoadedModel model, Path path, long millis, CompositeMeterRegistry meters) {
    }

    private ModelStartup() {
    }

    static Loaded load(ModelSettings settings) throws IOException {
        long start = System.nanoTime();
        Path path;
        if (settings.configured().isEmpty()) {
            LOG.info("no model configured (zse.model-path / ZSE_MODEL_PATH / --model): serving the demo model");
            path = DemoModel.ensureConverted(settings.cacheDir());
        } else {
            // A GGUF, zse-engine file or checkpoint directory is converted once into the cache (readiness DOWN
            // meanwhile).
            path = ModelImport.servable(settings.configured().get(), settings.cacheDir(), new LoggedProgress());
        }
        CompositeMeterRegistry meters = new CompositeMeterRegistry();
        LoadedModel model = ModelLoader.load(path, settings.options(), meters);
        if (settings.verification() == ZseConfig.WeightVerification.STARTUP
                && model.weights().verifyNow() instanceof WeightVerifier.Failed failed) {
            model.close();
            throw new IOException(failed.message());
        }
        return new Loaded(model, path, (System.nanoTime() - start) / 1_000_000, meters);
    }

    /** Conversion progress in the log: every 10 % and each note. */
    private static final class LoggedProgress implements ModelConverter.Progress {
        private int lastDecile = -1;

        @Override
        public void advanced(String tensor, long done, long total) {
            int decile = total == 0 ? 10 : (int) (10 * done / total);
            if (decile > lastDecile) {
                lastDecile = decile;
                LOG.infof("converting the model: %d %%", decile * 10);
            }
        }

        @Override
        public void note(String message) {
            LOG.infof("convert: %s", message);
        }
    }
}
