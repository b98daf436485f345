package io.zse.serve;

import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.generate.Generator;
import io.zse.generate.SequenceDecoder;
import io.zse.model.LlamaModel;
import io.zse.model.ModelConfig;
import io.zse.tokenizer.Tokenizer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Continuous batching for one model on its own thread. Each iteration prefills newly admitted prompts (each alone),
 * then runs one {@link LlamaModel#decodeBatch} step over every running sequence; sequences join at the next step
 * after their prefill and leave as soon as they finish or are cancelled, which frees their KV cache.
 */
public final class BatchingEngine implements AutoCloseable {
    private final LlamaModel model;
    private final Tokenizer tokenizer;
    private final Set<Integer> eosIds;
    private final EngineLimits limits;
    private final EngineMetrics metrics;
    private final int contextLength;
    private final long kvBytesPerPosition;
    private final KvCacheType kvCacheType;
    private final BlockingQueue<Sequence> queue;
    private final List<Sequence> running = new ArrayList<>(); // engine thread only
    private final AtomicLong kvBytesInUse = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger(); // submitted and not yet finished, failed or dropped
    private final Thread thread;
    private volatile int runningCount;
    private volatile boolean admitting = true;
    private volatile boolean closed;

    /** An engine whose sequences keep F32 KV caches. */
    public BatchingEngine(LlamaModel model, Tokenizer tokenizer, EngineLimits limits, EngineMetrics metrics) {
        this(model, tokenizer, limits, KvCacheType.F32, metrics);
    }

    public BatchingEngine(LlamaModel model, Tokenizer tokenizer, EngineLimits limits, KvCacheType kvCacheType,
                          EngineMetrics metrics) {
        this.model = model;
        this.kvCacheType = kvCacheType;
        this.tokenizer = tokenizer;
        ModelConfig config = model.config();
        this.eosIds = new HashSet<>(config.eosTokenIds());
        this.limits = limits;
        this.metrics = metrics;
        this.contextLength = limits.maxModelLength() == 0 ? config.contextLength()
                : Math.min(config.contextLength(), limits.maxModelLength());
        this.kvBytesPerPosition = model.kvBytesPerPosition(kvCacheType);
        this.queue = new ArrayBlockingQueue<>(Math.max(1, limits.maxQueued()));
        metrics.bind(queue::size, () -> runningCount, kvBytesInUse::get);
        this.thread = Thread.ofPlatform().name("zse-engine").daemon().start(this::loop);
    }

    /** The context a request may use: the model's, capped by {@link EngineLimits#maxModelLength()}. */
    public int contextLength() {
        return contextLength;
    }

    /** A running or queued sequence, as its submitter sees it. */
    public interface Handle {
        /** Stops the sequence; its KV cache is freed at the engine's next step. No further listener calls follow. */
        void cancel();
    }

    /**
     * Queues a sequence. Checks the prompt against the context at once.
     *
     * @throws IllegalArgumentException the prompt is empty or does not fit the context
     * @throws AdmissionException       the queue is full or the engine no longer admits requests
     */
    public Handle submit(GenerationRequest request, GenerationListener listener) {
        int budget = Generator.tokenBudget(request.promptIds().length, request.maxTokens(), contextLength);
        if (!admitting || closed) {
            throw new AdmissionException("the server is shutting down", 5);
        }
        Sequence sequence = new Sequence(request, listener, budget);
        inFlight.incrementAndGet();
        if (limits.maxQueued() == 0 || !queue.offer(sequence)) {
            inFlight.decrementAndGet();
            throw new AdmissionException("the request queue is full (" + limits.maxQueued() + " waiting)", 1);
        }
        return sequence;
    }

    /** Bytes of KV cache held by running sequences. */
    public long kvBytesInUse() {
        return kvBytesInUse.get();
    }

    public int runningSequences() {
        return runningCount;
    }

    public int queuedSequences() {
        return queue.size();
    }

    /** Refuses new requests from now on (shutdown); queued and running ones go on. */
    public void stopAdmitting() {
        admitting = false;
    }

    /** Waits until nothing is queued or running, or the timeout passes; true if idle. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (inFlight.get() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Stops the engine: every queued and running sequence gets {@link GenerationListener#onError}. */
    @Override
    public void close() {
        admitting = false;
        closed = true;
        thread.interrupt();
        try {
            thread.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void loop() {
        while (!closed) {
            try {
                admit();
                if (running.isEmpty()) {
                    continue;
                }
                decodeStep();
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException | Error e) {
                // a bug in a step: fail the batch rather than the engine, which goes on serving new requests
                RuntimeException error = closed ? new AdmissionException("the server stopped before the request finished", 5)
                        : e instanceof RuntimeException r ? r : new IllegalStateException(e);
                for (Sequence s : running) {
                    s.fail(error);
                }
                running.clear();
                runningCount = 0;
            }
        }
        AdmissionException stopped = new AdmissionException("the server stopped before the request finished", 5);
        running.forEach(s -> s.fail(stopped));
        running.clear();
        runningCount = 0;
        for (Sequence s; (s = queue.poll()) != null; ) {
            s.fail(stopped);
        }
    }

    /** Prefills queued prompts (each alone) while there is room in the batch and prefill budget in this step. */
    private void admit() throws InterruptedException {
        int prefilled = 0;
        while (running.size() < limits.maxRunning() && prefilled < limits.prefillTokensPerStep()) {
            Sequence s = running.isEmpty() ? queue.poll(100, TimeUnit.MILLISECONDS) : queue.poll();
            if (s == null) {
                return;
            }
            if (s.cancelled) {
                s.release();
                metrics.cancelled();
                continue;
            }
            prefilled += s.prompt.length;
            s.prefill();
            if (!s.finished()) {
                running.add(s);
                runningCount = running.size();
            }
        }
    }

    /** Drops cancelled sequences, then one decode step for all others. */
    private void decodeStep() {
        for (Iterator<Sequence> it = running.iterator(); it.hasNext(); ) {
            Sequence s = it.next();
            if (s.cancelled) {
                s.release();
                metrics.cancelled();
                it.remove();
            }
        }
        runningCount = running.size();
        if (running.isEmpty()) {
            return;
        }
        int n = running.size();
        int[] tokens = new int[n];
        KvCache[] caches = new KvCache[n];
        for (int i = 0; i < n; i++) {
            tokens[i] = running.get(i).decoder.lastToken();
            caches[i] = running.get(i).cache;
        }
        float[] logits = model.decodeBatch(tokens, caches);
        int vocab = model.config().vocabSize();
        for (int i = 0; i < n; i++) {
            running.get(i).step(Arrays.copyOfRange(logits, i * vocab, (i + 1) * vocab));
        }
        running.removeIf(Sequence::finished);
        runningCount = running.size();
    }

    /** One sequence's state inside the engine. */
    private final class Sequence implements Handle {
        final int[] prompt;
        final GenerationListener listener;
        final SequenceDecoder decoder;
        final int capacity;
        KvCache cache;
        long lastTokenAt;
        boolean first = true;
        volatile boolean cancelled;
        private boolean done;

        Sequence(GenerationRequest request, GenerationListener listener, int budget) {
            this.prompt = request.promptIds();
            this.listener = listener;
            this.capacity = prompt.length + budget;
            this.decoder = new SequenceDecoder(tokenizer, eosIds, prompt, budget, request.parameters(),
                    request.seed(), request.stops());
            this.lastTokenAt = System.nanoTime();
        }

        @Override
        public void cancel() {
            cancelled = true;
        }

        boolean finished() {
            return done;
        }

        void prefill() {
            try {
                cache = model.newCache(capacity, kvCacheType);
                kvBytesInUse.addAndGet(capacity * kvBytesPerPosition);
                float[] logits = model.forward(prompt, 0, cache);
                metrics.prefilled(prompt.length);
                if (!cancelled) {
                    listener.onPrefilled();
                }
                step(logits);
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        void step(float[] logits) {
            SequenceDecoder.Step step = decoder.next(logits);
            long now = System.nanoTime();
            if (step.choice() != null) {
                metrics.generated(now - lastTokenAt, first);
                first = false;
            }
            lastTokenAt = now;
            if (step.finished()) {
                release();
            }
            if (!cancelled) {
                try {
                    listener.onStep(step);
                } catch (RuntimeException e) {
                    cancelled = true; // a listener that cannot take output (its client is gone) ends the sequence
                }
            }
        }

        void fail(RuntimeException error) {
            release();
            if (!cancelled) {
                listener.onError(error);
            }
        }

        void release() {
            if (cache != null) {
                kvBytesInUse.addAndGet(-capacity * kvBytesPerPosition);
                cache = null;
            }
            if (!done) {
                done = true;
                inFlight.decrementAndGet();
            }
        }
    }
}
