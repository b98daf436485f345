package io.zse.serve;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.zse.backend.KvBlockPool;

import java.time.Duration;
import java.util.function.Supplier;

/** The engine's meters: token counters, latency histograms and gauges over its queue and batch. */
public final class EngineMetrics {
    private final Counter promptTokens;
    private final Counter generatedTokens;
    private final Counter cancelled;
    private final Counter preempted;
    private final Timer timeToFirstToken;
    private final Timer interTokenLatency;
    private final MeterRegistry registry;

    public EngineMetrics(MeterRegistry registry) {
        this.registry = registry;
        promptTokens = Counter.builder("zse.prompt.tokens").description("Prompt tokens prefilled").register(registry);
        generatedTokens = Counter.builder("zse.generated.tokens").description("Tokens generated").register(registry);
        cancelled = Counter.builder("zse.cancelled.sequences").description("Sequences cancelled (client gone) before "
                + "they finished").register(registry);
        preempted = Counter.builder("zse.preempted.sequences").description("Sequences that gave their KV blocks back "
                + "when the pool ran out, to be recomputed").register(registry);
        timeToFirstToken = Timer.builder("zse.time.to.first.token")
                .description("From admission to the first generated token").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60)).register(registry);
        interTokenLatency = Timer.builder("zse.inter.token.latency")
                .description("Between two generated tokens of one sequence").publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10)).register(registry);
    }

    /** Registers the gauges that read the engine's live state. */
    void bind(Supplier<Number> queued, Supplier<Number> running, Supplier<Number> kvBytes, KvBlockPool pool) {
        gauge("zse.queue.depth", "Sequences waiting for a place in the batch (preempted ones included)", queued);
        gauge("zse.running.sequences", "Sequences in the running batch", running);
        gauge("zse.kv.cache.bytes", "KV cache bytes held by running sequences", kvBytes);
        gauge("zse.kv.cache.blocks.used", "KV pool blocks held by sequences", pool::usedBlocks);
        gauge("zse.kv.cache.blocks", "KV pool blocks in all", pool::totalBlocks);
        FunctionCounter.builder("zse.prefix.cache.hits", pool, KvBlockPool::prefixHits)
                .description("Prompt blocks found in the prefix cache (not computed)").register(registry);
        FunctionCounter.builder("zse.prefix.cache.misses", pool, KvBlockPool::prefixMisses)
                .description("Prompt blocks looked for in the prefix cache and not found").register(registry);
    }

    private void gauge(String name, String description, Supplier<Number> value) {
        // strong reference: the supplier is a lambda nothing else holds
        Gauge.builder(name, value).description(description).strongReference(true).register(registry);
    }

    void cancelled() {
        cancelled.increment();
    }

    void preempted() {
        preempted.increment();
    }

    void prefilled(int tokens) {
        promptTokens.increment(tokens);
    }

    void generated(long nanosSinceLast, boolean first) {
        generatedTokens.increment();
        (first ? timeToFirstToken : interTokenLatency).record(Duration.ofNanos(nanosSinceLast));
    }
}
