package io.zse.cli;

import picocli.CommandLine.Option;

/** Mixed into every command: {@code --debug} prints stack traces (read by {@link ZseCommand#execute}). */
public final class DebugOption {
    @Option(names = "--debug", description = "Print stack traces on failure.")
    boolean debug;
}
