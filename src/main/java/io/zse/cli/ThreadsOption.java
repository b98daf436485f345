package io.zse.cli;

import io.zse.backend.cpu.CpuThreads;
import picocli.CommandLine.Option;

/** Mixed into the commands that run one model on the CPU: {@code --threads N}. */
public final class ThreadsOption {
    @Option(names = "--threads", paramLabel = "N", description = "CPU threads (default: zse.threads, else all cores).")
    Integer threads;

    /** The thread count asked for, else {@link CpuThreads#defaultThreads()}. */
    public int count() {
        return threads != null ? threads : CpuThreads.defaultThreads();
    }
}
