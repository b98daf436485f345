package io.zse.serve;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.function.Supplier;

/** The engine's meters: token counters, latency histograms and gauges over its queue and batch. */
public final class EngineMetrics {
    private final Counter promptTokens;
    private final Counter generatedTokens;
    private final Timer timeToFirstToken;
    private final Timer interTokenLatency;
    private final MeterRegistry registry;

    public EngineMetrics(MeterRegistry registry) {
        this.registry = registry;
        promptTokens = Counter.builder("zse.prompt.tokens").description("Prompt tokens prefilled").register(registry);
        generatedTokens = Counter.builder("zse.generated.tokens").description("Tokens generated").register(registry);
        timeToFirstToken = Timer.builder("zse.time.to.first.token")
                .description("From admission to the first generated token").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60)).register(registry);
        interTokenLatency = Timer.builder("zse.inter.token.latency")
                .description("Between two generated tokens of one sequence").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
    }

    /** Registers the gauges that read the engine's live state. */
    void bind(Supplier<Number> queued, Supplier<Number> running, Supplier<Number> kvBytes) {
        registry.gauge("zse.queue.depth", java.util.List.of(), queued, s -> s.get().doubleValue());
        registry.gauge("zse.running.sequences", java.util.List.of(), running, s -> s.get().doubleValue());
        registry.gauge("zse.kv.cache.bytes", java.util.List.of(), kvBytes, s -> s.get().doubleValue());
    }

    void prefilled(int tokens) {
        promptTokens.increment(tokens);
    }

    void generated(long nanosSinceLast, boolean first) {
        generatedTokens.increment();
        (first ? timeToFirstToken : interTokenLatency).record(Duration.ofNanos(nanosSinceLast));
    }
}
