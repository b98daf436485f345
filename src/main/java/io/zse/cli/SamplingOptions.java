package io.zse.cli;

import io.zse.generate.SamplingParameters;
import picocli.CommandLine.Option;

/** Mixed into the commands that sample: temperature, top-p, top-k, min-p and the seed. */
public final class SamplingOptions {
    @Option(names = "--temperature", defaultValue = "0.8", paramLabel = "T", description = "0 is greedy. Default ${DEFAULT-VALUE}.")
    double temperature;

    @Option(names = "--top-p", defaultValue = "1", paramLabel = "P")
    double topP;

    @Option(names = "--top-k", defaultValue = "0", paramLabel = "K", description = "0 disables it.")
    int topK;

    @Option(names = "--min-p", defaultValue = "0", paramLabel = "P")
    double minP;

    @Option(names = "--seed", paramLabel = "S", description = "Makes sampling reproducible.")
    Long seed;

    SamplingParameters parameters() {
        return SamplingParameters.temperature(temperature).withTopK(topK).withTopP(topP).withMinP(minP);
    }

    /** The given seed, else one from the clock. */
    long seedOrClock() {
        return seed != null ? seed : System.nanoTime();
    }
}
