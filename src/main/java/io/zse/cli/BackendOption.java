package io.zse.cli;

import io.zse.backend.Backend;
import io.zse.backend.BackendChoice;
import io.zse.backend.BackendSelector;
import io.zse.backend.KvCacheType;
import io.zse.format.ZseFile;
import io.zse.model.ModelConfig;
import io.zse.model.ModelFootprint;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.util.Optional;

/** Mixed into the compute commands: {@code --backend auto|cpu|cuda|cuda:N}. */
public final class BackendOption {
    @Option(names = "--backend", paramLabel = "KIND",
            description = "auto, cpu, cuda or cuda:N (default: zse.backend, else auto: CUDA when usable).")
    String backend;

    /**
     * Opens the chosen backend for a model that will hold {@code positions} KV positions of {@code kvType} and run up
     * to {@code batchRows} tokens per forward pass, with {@code cpuThreads} threads should it be the CPU; a CPU
     * fallback is reported as one line on {@code err}.
     */
    public Backend open(ZseFile file, long positions, KvCacheType kvType, int batchRows, int cpuThreads,
                        PrintWriter err) {
        BackendChoice choice = BackendChoice.resolve(Optional.ofNullable(backend));
        ModelConfig config = ModelConfig.fromJson(file.configJson());
        long held = Math.min(positions, config.contextLength());
        return new BackendSelector(line -> {
            err.println(line);
            err.flush();
        }).select(choice, Optional.of(ModelFootprint.of(file, config, held, batchRows, kvType)), cpuThreads);
    }
}
