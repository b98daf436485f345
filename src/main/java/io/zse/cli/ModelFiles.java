package io.zse.cli;

import io.zse.convert.ModelImport;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * The .zse file a command's {@code --model} names: the file itself, or, for a GGUF file, a zse-engine file or a
 * Hugging Face checkpoint directory, its conversion in the cache directory (made on first use, reused after). The
 * cache directory is the server's: {@code -Dzse.cache-dir}, else {@code ZSE_CACHE_DIR}, else {@code ~/.cache/zse}.
 */
final class ModelFiles {
    private ModelFiles() {
    }

    static Path servable(Path model, PrintWriter err) throws IOException {
        String dir = System.getProperty("zse.cache-dir", System.getenv("ZSE_CACHE_DIR"));
        Path cache = dir != null && !dir.isBlank() ? Path.of(dir) : Path.of(System.getProperty("user.home"), ".cache", "zse");
        ProgressDisplay progress = new ProgressDisplay(err);
        Path file = ModelImport.servable(model, cache, progress);
        progress.done();
        return file;
    }
}
