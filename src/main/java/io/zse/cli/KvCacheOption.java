package io.zse.cli;

import io.zse.backend.KvCacheType;
import picocli.CommandLine.Option;

/** Mixed into the commands that run a model: {@code --kv-cache f32|f16|int8}. */
public final class KvCacheOption {
    @Option(names = "--kv-cache", defaultValue = "f32", paramLabel = "TYPE",
            description = "KV cache storage: f32, f16 or int8 (default ${DEFAULT-VALUE}).")
    String kvCache;

    KvCacheType type() {
        return KvCacheType.parse(kvCache);
    }
}
