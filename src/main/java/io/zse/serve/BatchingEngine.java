package io.zse.serve;

import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.generate.Generator;
import io.zse.generate.Sampler;
import io.zse.generate.SequenceDecoder;
import io.zse.model.LlamaModel;
import io.zse.model.ModelConfig;
import io.zse.tokenizer.Tokenizer;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * Continuous batching for one model on its own thread. The sequences' keys and values live in one paged
 * {@link KvBlockPool}, allocated off-heap when the engine starts; each sequence takes blocks as it grows. Every step,
 * the {@link StepScheduler} packs a decode token of each running sequence and chunks of prompts into one forward
 * pass; sequences whose chunk ends their tokens get a token sampled. Sequences join as soon as the pool has room for
 * their prompt, leave as soon as they finish or are cancelled, and give their blocks back then (prompt blocks stay
 * cached for later prompts that start the same way).
 */
public final class BatchingEngine implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(BatchingEngine.class.getName());

    private final LlamaModel model;
    private final Tokenizer tokenizer;
    private final Set<Integer> eosIds;
    private final EngineLimits limits;
    private final EngineMetrics metrics;
    private final int contextLength;
    private final KvBlockPool pool;
    private final boolean prefixCache;
    private final StepScheduler<Sequence> scheduler;
    private final BlockingQueue<Sequence> queue;
    private final List<Sequence> running = new ArrayList<>();     // engine thread only, admission order
    private final Deque<Sequence> waiting = new ArrayDeque<>();   // engine thread only: taken from the queue
    private final AtomicInteger inFlight = new AtomicInteger(); // submitted and not yet finished, failed or dropped
    private final AtomicInteger waitingCount = new AtomicInteger();
    private final Thread thread;
    private volatile int runningCount;
    private volatile boolean admitting = true;
    private volatile boolean closed;

    /** An engine whose pool holds F32 keys and values, {@code kvBytes} of them, prefix caching on. */
    public BatchingEngine(LlamaModel model, Tokenizer tokenizer, EngineLimits limits, long kvBytes, EngineMetrics metrics) {
        this(model, tokenizer, limits, KvPoolSettings.of(kvBytes), metrics);
    }

    public BatchingEngine(LlamaModel model, Tokenizer tokenizer, EngineLimits limits, KvPoolSettings kv,
                          EngineMetrics metrics) {
        this.model = model;
        this.tokenizer = tokenizer;
        ModelConfig config = model.config();
        this.eosIds = new HashSet<>(config.eosTokenIds());
        this.limits = limits;
        this.metrics = metrics;
        long blockBytes = model.kvBytesPerPosition(kv.type()) * kv.blockSize();
        int blocks = (int) Math.clamp(kv.bytes() / blockBytes, 1, Integer.MAX_VALUE / kv.blockSize());
        this.pool = model.newPool(kv.type(), kv.blockSize(), blocks, Arena.ofShared());
        this.prefixCache = kv.prefixCache();
        int modelLength = limits.maxModelLength() == 0 ? config.contextLength()
                : Math.min(config.contextLength(), limits.maxModelLength());
        // a sequence never outgrows the pool: alone, it always fits, so preemption always ends
        this.contextLength = (int) Math.min(modelLength, pool.capacityTokens());
        this.scheduler = new StepScheduler<>(limits.maxBatchTokens(), limits.maxRunning(), kv.prefixCache());
        this.queue = new ArrayBlockingQueue<>(Math.max(1, limits.maxQueued()));
        metrics.bind(this::queuedSequences, () -> runningCount, this::kvBytesInUse, pool);
        LOG.info(String.format("KV cache pool: %d blocks of %d tokens = %d tokens, %.1f MiB (%s, %d bytes/token); "
                        + "prefix cache %s; a sequence may use up to %d tokens",
                blocks, kv.blockSize(), pool.capacityTokens(), blocks * (double) blockBytes / (1 << 20),
                kv.type().label(), pool.bytesPerToken(), kv.prefixCache() ? "on" : "off", contextLength));
        this.thread = Thread.ofPlatform().name("zse-engine").daemon().start(this::loop);
    }

    /** The context a request may use: the model's, capped by {@link EngineLimits#maxModelLength()} and the pool. */
    public int contextLength() {
        return contextLength;
    }

    /** The engine's KV memory (read its counters; the engine thread owns its blocks). */
    public KvBlockPool pool() {
        return pool;
    }

    /** A running or queued sequence, as its submitter sees it. */
    public interface Handle {
        /** Stops the sequence; its KV blocks are freed at the engine's next step. No further listener calls follow. */
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
        if (limits.maxQueued() == 0 || waitingCount.get() >= limits.maxQueued() || !queue.offer(sequence)) {
            inFlight.decrementAndGet();
            throw new AdmissionException("the request queue is full (" + limits.maxQueued() + " waiting)", 1);
        }
        waitingCount.incrementAndGet();
        // closed after the check above: the loop may already have failed what it found queued, so take the sequence
        // back if it is still there (if not, the loop took it and has told its listener)
        if (closed && queue.remove(sequence)) {
            waitingCount.decrementAndGet();
            sequence.release();
            throw new AdmissionException("the server is shutting down", 5);
        }
        return sequence;
    }

    /**
     * Runs a pass over a prompt that is not a sequence ({@link PromptPass}: prompt logprobs, embeddings) on the calling
     * thread, between the engine's steps (the model runs one pass at a time). It counts as in flight, so shutdown
     * waits for it, and is refused once the engine no longer admits requests.
     */
    public <T> T runAside(Function<PromptPass, T> pass) {
        inFlight.incrementAndGet(); // before the check: a shutdown that then finds the engine idle has refused this
        try {
            if (!admitting || closed) {
                throw new AdmissionException("the server is shutting down", 5);
            }
            return pass.apply(new PromptPass(model, pool.type(), metrics::prefilled));
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Bytes of KV blocks held by sequences (cached prefix blocks nobody uses are not counted). */
    public long kvBytesInUse() {
        return (long) pool.usedBlocks() * pool.blockSize() * pool.bytesPerToken();
    }

    public int runningSequences() {
        return runningCount;
    }

    /** Sequences submitted and not yet running (including preempted ones waiting to be recomputed). */
    public int queuedSequences() {
        return waitingCount.get();
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

    /**
     * Stops the engine: every queued and running sequence gets {@link GenerationListener#onError}; the pool and the
     * model's activation buffers are freed.
     */
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
        if (!thread.isAlive()) {
            pool.close(); // a step still running would fail on the closed memory, not crash: the arena is shared
            model.releaseBuffers();
        }
    }

    private void loop() {
        while (!closed) {
            try {
                takeSubmitted();
                dropCancelled();
                if (running.isEmpty() && waiting.isEmpty()) {
                    continue;
                }
                step();
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException | Error e) {
                // a bug in a step: fail the batch rather than the engine, which goes on serving new requests
                RuntimeException error = closed ? new AdmissionException("the server stopped before the request finished", 5)
                        : e instanceof RuntimeException r ? r : new IllegalStateException(e);
                running.forEach(s -> s.fail(error));
                running.clear();
                runningCount = 0;
            }
        }
        AdmissionException stopped = new AdmissionException("the server stopped before the request finished", 5);
        running.forEach(s -> s.fail(stopped));
        running.clear();
        runningCount = 0;
        for (Sequence s; (s = waiting.poll()) != null || (s = queue.poll()) != null; ) {
            waitingCount.decrementAndGet();
            s.fail(stopped);
        }
    }

    /** Moves submitted sequences to the waiting list; blocks a little when there is nothing else to do. */
    private void takeSubmitted() throws InterruptedException {
        if (running.isEmpty() && waiting.isEmpty()) {
            Sequence s = queue.poll(100, TimeUnit.MILLISECONDS);
            if (s != null) {
                waiting.add(s);
            }
        }
        queue.drainTo(waiting);
    }

    /** Cancelled sequences leave, wherever they are, and give their blocks back. */
    private void dropCancelled() {
        for (var it = waiting.iterator(); it.hasNext(); ) {
            Sequence s = it.next();
            if (s.cancelled) {
                it.remove();
                waitingCount.decrementAndGet();
                s.release();
                metrics.cancelled();
            }
        }
        for (var it = running.iterator(); it.hasNext(); ) {
            Sequence s = it.next();
            if (s.cancelled) {
                it.remove();
                s.release();
                metrics.cancelled();
            }
        }
        runningCount = running.size();
    }

    /** Plans a step, runs it as one forward pass, and samples for the sequences whose tokens it completed. */
    private void step() {
        int before = waiting.size();
        StepScheduler.Plan<Sequence> plan = scheduler.schedule(running, waiting);
        waitingCount.addAndGet(waiting.size() - before);
        runningCount = running.size();
        plan.preempted().forEach(s -> metrics.preempted());
        if (plan.work().isEmpty()) {
            return;
        }
        int[] tokens = new int[plan.tokens()];
        List<BatchLayout.Segment> segments = new ArrayList<>();
        int[] logitRows = new int[(int) plan.work().stream().filter(StepScheduler.Work::sampled).count()];
        int row = 0;
        int sampled = 0;
        for (StepScheduler.Work<Sequence> w : plan.work()) {
            System.arraycopy(w.sequence().tokens(), w.start(), tokens, row, w.count());
            segments.add(new BatchLayout.Segment(w.sequence().cache, w.start(), row, w.count()));
            row += w.count();
            if (w.sampled()) {
                logitRows[sampled++] = row - 1;
            }
        }
        // Tokens are drawn on the device where it can and the request wants no logprobs: only their ids come back.
        List<Sequence> sampledSequences = plan.work().stream().filter(StepScheduler.Work::sampled)
                .map(StepScheduler.Work::sequence).toList();
        double[] draws = new double[logitRows.length * Sampler.DEVICE_PARAMETERS];
        boolean[] onDevice = new boolean[logitRows.length];
        boolean anyOnDevice = false;
        if (model.drawsOnBackend()) {
            for (int i = 0; i < logitRows.length; i++) {
                onDevice[i] = sampledSequences.get(i).deviceDraw(draws, i * Sampler.DEVICE_PARAMETERS);
                anyOnDevice |= onDevice[i];
            }
        }
        LlamaModel.Drawn drawn;
        try {
            drawn = anyOnDevice ? model.forward(tokens, new BatchLayout(segments), logitRows, draws, onDevice)
                    : new LlamaModel.Drawn(allHost(logitRows.length),
                    model.forward(tokens, new BatchLayout(segments), logitRows));
        } catch (RuntimeException e) {
            for (StepScheduler.Work<Sequence> w : plan.work()) {
                running.remove(w.sequence());
                w.sequence().fail(e);
            }
            runningCount = running.size();
            return;
        }
        int vocab = model.config().vocabSize();
        sampled = 0;
        int hostRow = 0;
        for (StepScheduler.Work<Sequence> w : plan.work()) {
            Sequence s = w.sequence();
            if (s.prefilling()) {
                metrics.prefilled(w.count());
            }
            if (prefixCache) {
                s.cache.publishComputed(s.tokens());
            }
            if (w.sampled()) {
                int token = drawn.tokens()[sampled++];
                try {
                    if (token >= 0) {
                        s.step(token);
                    } else {
                        s.step(drawn.logits(), hostRow++ * vocab, vocab); // the row is counted before step can throw
                    }
                } catch (RuntimeException e) {
                    s.fail(e); // one request's failure (its constraint, say) is not its batch's
                }
            }
        }
        running.removeIf(Sequence::finished);
        runningCount = running.size();
    }

    /** No token drawn on the device: every row's logits come to the host. */
    private static int[] allHost(int rows) {
        int[] tokens = new int[rows];
        Arrays.fill(tokens, -1);
        return tokens;
    }

    /** One sequence's state inside the engine. */
    private final class Sequence implements Handle, StepScheduler.Schedulable {
        final GenerationListener listener;
        final SequenceDecoder decoder;
        final KvCache cache;
        final boolean logprobs;
        int[] tokens;      // prompt + generated: a new array after each sampled token, never changed in place
        long lastTokenAt;
        boolean first = true;
        volatile boolean cancelled;
        private boolean done;

        Sequence(GenerationRequest request, GenerationListener listener, int budget) {
            int[] prompt = request.promptIds();
            this.listener = listener;
            this.logprobs = request.logprobs();
            this.tokens = prompt.clone();
            this.cache = new KvCache(pool, prompt.length + budget);
            model.startSequence(cache, prompt.length);
            this.decoder = new SequenceDecoder(tokenizer, eosIds, prompt, budget, request.parameters(),
                    request.seed(), request.stops(), request.constraint(), request.keepSpecialTokens(),
                    request.ends());
            this.lastTokenAt = System.nanoTime();
        }

        @Override
        public void cancel() {
            cancelled = true;
        }

        @Override
        public KvCache cache() {
            return cache;
        }

        @Override
        public int[] tokens() {
            return tokens;
        }

        /** Still computing its prompt (not a decode step, not a recompute after preemption of generated tokens). */
        boolean prefilling() {
            return first;
        }

        boolean finished() {
            return done;
        }

        /** Whether this step's token may be drawn on the device; if so its parameters go to draws[at..]. */
        boolean deviceDraw(double[] draws, int at) {
            return !logprobs && decoder.deviceDraw(draws, at);
        }

        /** Samples the next token from its row of the step's logits. */
        void step(float[] logits, int offset, int vocab) {
            advance(decoder.next(logits, offset, vocab));
        }

        /** Takes the token drawn on the device. */
        void step(int token) {
            advance(decoder.next(token));
        }

        private void advance(SequenceDecoder.Step step) {
            if (first && !cancelled) {
                listener.onPrefilled();
            }
            tokens = decoder.tokens();
            long now = System.nanoTime();
            if (step.choice() != null) {
                metrics.generated(now - lastTokenAt, first);
            }
            first = false;
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
            cache.release();
            if (!done) {
                done = true;
                inFlight.decrementAndGet();
            }
        }
    }
}
