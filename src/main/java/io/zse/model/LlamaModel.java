package io.zse.model;

import io.zse.backend.ActivationBuffer;
import io.zse.backend.AttentionShape;
import io.zse.backend.Backend;
import io.zse.backend.BatchLayout;
import io.zse.backend.KvBlockPool;
import io.zse.backend.KvCache;
import io.zse.backend.KvCacheType;
import io.zse.backend.WeightMatrix;
import io.zse.format.ZseFile;
import io.zse.generate.Sampler;
import io.zse.generate.SamplingParameters;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The Llama-family decoder (Llama, Mistral, Qwen2, Qwen3, Phi-3, Gemma 2 and 3, BitNet b1.58), written once against
 * {@link Backend} ops. Stateless apart from its
 * weights: each sequence brings its own {@link KvCache} (a block table over a shared {@link KvBlockPool}), so one
 * model serves many sequences, and one forward pass can mix their decode tokens and prompt chunks.
 */
public final class LlamaModel {
    private final ModelConfig config;
    private final Weights weights;
    private final Backend backend;
    private final AttentionShape[] attentionShapes; // per layer: Gemma alternates local and global attention
    private final float[][] ropeFrequencies;        // per layer [headDim / 2]: Gemma 3's local layers have their own
    private final LongRope longRope;         // null unless Phi-3's LongRoPE, which picks its table per position
    private Workspace workspace;           // grown as batches grow; one pass at a time uses it (forward is synchronized)

    public LlamaModel(ModelConfig config, Weights weights, Backend backend) {
        this.config = config;
        this.weights = weights;
        this.backend = backend;
        GemmaOptions gemma = config.gemma();
        float[] global = RotaryFrequencies.of(config.headDim(), config.ropeTheta(), config.ropeScaling());
        float[] local = gemma == null ? global : RotaryFrequencies.of(config.headDim(), gemma.localRopeTheta(), null);
        this.attentionShapes = new AttentionShape[config.numLayers()];
        this.ropeFrequencies = new float[config.numLayers()][];
        for (int layer = 0; layer < config.numLayers(); layer++) {
            int window = config.slidingWindowOf(layer);
            attentionShapes[layer] = gemma == null
                    ? new AttentionShape(config.numHeads(), config.numKvHeads(), config.headDim(), window)
                    : new AttentionShape(config.numHeads(), config.numKvHeads(), config.headDim(), window,
                    (float) gemma.queryScale(), (float) gemma.attentionSoftCap());
            ropeFrequencies[layer] = gemma != null && gemma.sliding(layer) ? local : global;
        }
        this.longRope = LongRope.of(config);
    }

    /** Reads the config and views the weights of an open file (no weight bytes are read on the CPU backend). */
    public static LlamaModel load(ZseFile file, Backend backend) {
        ModelConfig config = ModelConfig.fromJson(file.configJson());
        return new LlamaModel(config, Weights.load(file, config, backend), backend);
    }

    public ModelConfig config() {
        return config;
    }

    /** An F32 cache for one sequence of up to {@code capacity} positions (at most the context length). */
    public KvCache newCache(int capacity) {
        return newCache(capacity, KvCacheType.F32);
    }

    /** A cache for one sequence of up to {@code capacity} positions, storing keys and values as {@code type}. */
    public KvCache newCache(int capacity, KvCacheType type) {
        if (capacity <= 0 || capacity > config.contextLength()) {
            throw new IllegalArgumentException("KV cache of " + capacity + " positions: must be 1.."
                    + config.contextLength() + " (the context length)");
        }
        return new KvCache(type, config.numLayers(), capacity, config.numKvHeads(), config.headDim());
    }

    /**
     * Declares the prompt length of the sequence a new cache will hold, for a prompt computed in several passes or
     * looked up in the prefix cache: LongRoPE rotates a sequence by its prompt's length ({@link LongRope}). Without
     * it, the sequence's first pass is taken for its prompt.
     */
    public void startSequence(KvCache cache, int promptLength) {
        if (longRope != null) {
            cache.decideLongRopeFrom(longRope.switchPosition(promptLength));
        }
    }

    /** Bytes one position of a {@code type} KV cache takes: keys and values of every layer, scales included. */
    public long kvBytesPerPosition(KvCacheType type) {
        return KvBlockPool.bytesPerToken(type, config.numLayers(), config.numKvHeads(), config.headDim());
    }

    /** The KV memory for many sequences: {@code blocks} blocks of {@code blockSize} positions, freed with {@code arena}. */
    public KvBlockPool newPool(KvCacheType type, int blockSize, int blocks, Arena arena) {
        return new KvBlockPool(type, config.numLayers(), config.numKvHeads(), config.headDim(), blockSize, blocks, arena);
    }

    /** Runs {@code tokens} at positions startPos.. and returns the logits of the last one [vocab]. */
    public float[] forward(int[] tokens, int startPos, KvCache cache) {
        return forward(tokens, BatchLayout.single(cache, startPos, tokens.length), new int[]{tokens.length - 1});
    }

    /** Like {@link #forward} but returns the logits of every position [tokens.length, vocab]. */
    public float[] forwardAll(int[] tokens, int startPos, KvCache cache) {
        int[] every = new int[tokens.length];
        Arrays.setAll(every, i -> i);
        return forward(tokens, BatchLayout.single(cache, startPos, tokens.length), every);
    }

    /**
     * One decode step for several sequences together: tokens[i] goes at position {@code caches[i].length()} of its own
     * cache. The weight matrices are read once for the whole batch. Returns logits [tokens.length, vocab], row i for
     * sequence i, identical to what {@link #forward} gives each sequence alone.
     */
    public float[] decodeBatch(int[] tokens, KvCache[] caches) {
        return forward(tokens, BatchLayout.decode(caches), everyRow(tokens, caches));
    }

    /** Rows 0..n-1 of a decode step of n sequences: a token for each cache. */
    private static int[] everyRow(int[] tokens, KvCache[] caches) {
        if (tokens.length != caches.length) {
            throw new IllegalArgumentException(tokens.length + " tokens for " + caches.length + " caches");
        }
        int[] rows = new int[tokens.length];
        Arrays.setAll(rows, i -> i);
        return rows;
    }

    /**
     * One greedy step of {@link #decodeBatch}: the next token of each sequence, drawn where the logits are when the
     * backend draws (only the ids come back, not [sequences, vocab] logits), else each row's argmax on the host.
     */
    public int[] decodeBatchGreedy(int[] tokens, KvCache[] caches) {
        int n = tokens.length;
        int[] next = new int[n];
        if (!drawsOnBackend()) {
            float[] logits = decodeBatch(tokens, caches);
            int vocab = config.vocabSize();
            Arrays.setAll(next, i -> Sampler.argmax(logits, i * vocab, vocab));
            return next;
        }
        int[] rows = everyRow(tokens, caches);
        double[] parameters = new double[n * Sampler.DEVICE_PARAMETERS];
        Sampler greedy = new Sampler(SamplingParameters.GREEDY, 0);
        for (int i = 0; i < n; i++) {
            greedy.deviceDraw(parameters, i * Sampler.DEVICE_PARAMETERS);
        }
        boolean[] onBackend = new boolean[n];
        Arrays.fill(onBackend, true);
        return forward(tokens, BatchLayout.decode(caches), rows, parameters, onBackend).tokens();
    }

    /**
     * One forward pass over a mixed batch: decode tokens and prompt chunks of many sequences, laid out by
     * {@code batch}, each segment's tokens going at its positions of its own cache (taking blocks from its pool as
     * needed). Returns the logits of the rows in {@code logitRows} only [logitRows.length, vocab]: a prompt chunk that
     * does not end its prompt needs none, and the output projection is the largest matrix.
     *
     * @throws IllegalStateException a cache's pool has no block left (the engine reserves before it runs)
     */
    public synchronized float[] forward(int[] tokens, BatchLayout batch, int[] logitRows) {
        Workspace ws = run(tokens, batch, logitRows);
        float[] logits = new float[logitRows.length * config.vocabSize()];
        if (logits.length > 0) {
            backend.read(ws.logits, logits, logits.length);
            softCap(logits);
        }
        return logits;
    }

    /**
     * What a pass whose tokens were drawn on the backend gave.
     *
     * @param tokens per logits row, the token drawn, or -1 where the host samples: a row not drawn on the backend, or
     *               one the backend handed back
     * @param logits the logits of the -1 rows only, in row order [count of -1 rows, vocab]
     */
    public record Drawn(int[] tokens, float[] logits) {
    }

    /** Whether {@link #forward(int[], BatchLayout, int[], double[], boolean[])} can draw tokens on the backend. */
    public boolean drawsOnBackend() {
        return backend.samplesOnDevice() && (config.gemma() == null || config.gemma().finalSoftCap() == 0);
    }

    /**
     * Like {@link #forward(int[], BatchLayout, int[])}, but the tokens of the rows with {@code onBackend[i]} are drawn
     * where the logits are (a device), with the {@value Sampler#DEVICE_PARAMETERS} parameters per row at
     * {@code parameters[i · DEVICE_PARAMETERS ..]} ({@link Sampler#deviceDraw}): only their ids come back, and the
     * logits of the other rows.
     */
    public synchronized Drawn forward(int[] tokens, BatchLayout batch, int[] logitRows, double[] parameters,
                                      boolean[] onBackend) {
        int n = logitRows.length;
        if (onBackend.length != n || parameters.length != n * Sampler.DEVICE_PARAMETERS) {
            throw new IllegalArgumentException(onBackend.length + " draw flags and " + parameters.length
                    + " parameters for " + n + " logits rows");
        }
        Workspace ws = run(tokens, batch, logitRows);
        int vocab = config.vocabSize();
        int[] drawn = new int[n];
        Arrays.fill(drawn, -1);
        boolean any = false;
        for (boolean b : onBackend) {
            any |= b;
        }
        if (any) {
            if (!drawsOnBackend()) {
                throw new IllegalStateException("this model's backend does not draw tokens");
            }
            double[] all = parameters.clone();
            for (int i = 0; i < n; i++) {
                if (!onBackend[i]) { // drawn greedily and ignored: one launch for every row
                    Arrays.fill(all, i * Sampler.DEVICE_PARAMETERS, (i + 1) * Sampler.DEVICE_PARAMETERS, 0);
                    all[i * Sampler.DEVICE_PARAMETERS + 2] = 1;
                }
            }
            int[] ids = backend.sample(ws.logits, n, vocab, all);
            for (int i = 0; i < n; i++) {
                drawn[i] = onBackend[i] ? ids[i] : -1;
            }
        }
        int[] hostRows = IntStream.range(0, n).filter(i -> drawn[i] < 0).toArray();
        float[] logits = new float[hostRows.length * vocab];
        if (hostRows.length > 0) {
            backend.readRows(ws.logits, hostRows, vocab, logits);
            softCap(logits);
        }
        return new Drawn(drawn, logits);
    }

    /** Runs the pass and leaves the logits of {@code logitRows} in the workspace's logits, on the backend. */
    private Workspace run(int[] tokens, BatchLayout batch, int[] logitRows) {
        for (int row : logitRows) {
            if (row < 0 || row >= tokens.length) {
                throw new IllegalArgumentException("logits of row " + row + " of a batch of " + tokens.length);
            }
        }
        prepare(tokens, batch);
        // A decode step wants every row's logits: no gather, and the backend may replay a recorded pass of a padded size.
        // (Not under LongRoPE: its rotation is one launch per run of rows, which differs from step to step.)
        boolean everyRow = longRope == null && isEveryRow(logitRows, tokens.length);
        int rows = everyRow ? backend.passRows(batch) : tokens.length;
        int wantedRows = everyRow ? rows : logitRows.length;
        Workspace ws = workspace(rows, wantedRows);
        int[] passTokens = rows == tokens.length ? tokens : Arrays.copyOf(tokens, rows);
        float eps = (float) config.normEps();
        Runnable ops = () -> {
            decoderLayers(passTokens, batch, ws);
            if (wantedRows == 0) {
                return;
            }
            // Only the rows whose logits are wanted go through the final norm and the (large) output projection, and
            // only their logits come back from the backend.
            ActivationBuffer wanted = ws.x;
            if (!everyRow) {
                backend.gatherRows(ws.x, logitRows, config.hiddenSize(), ws.wanted);
                wanted = ws.wanted;
            }
            backend.rmsNorm(wanted, wantedRows, weights.finalNorm(), eps, ws.normed);
            backend.matmul(ws.normed, wantedRows, weights.outputProjection(), ws.logits);
        };
        if (everyRow) {
            backend.pass(ws, passTokens, batch, ops);
        } else {
            ops.run();
        }
        setLengths(batch);
        return ws;
    }

    /** Gemma's final soft-capping, where the model has it. */
    private void softCap(float[] logits) {
        if (config.gemma() != null && config.gemma().finalSoftCap() > 0) {
            softCap(logits, (float) config.gemma().finalSoftCap());
        }
    }

    /**
     * Like {@link #forward(int[], BatchLayout, int[])} but returns the final hidden state (after the final norm, before
     * the output projection) of every row [tokens.length, hiddenSize]: what embeddings are pooled from.
     */
    public synchronized float[] hiddenStates(int[] tokens, BatchLayout batch) {
        prepare(tokens, batch);
        Workspace ws = workspace(tokens.length, 0);
        decoderLayers(tokens, batch, ws);
        setLengths(batch);
        backend.rmsNorm(ws.x, tokens.length, weights.finalNorm(), (float) config.normEps(), ws.normed);
        float[] hidden = new float[tokens.length * config.hiddenSize()];
        backend.read(ws.normed, hidden, hidden.length);
        return hidden;
    }

    /** logits[k] = cap·tanh(logits[k] / cap), in F32 as transformers does it (Gemma's final soft-capping). */
    private static void softCap(float[] logits, float cap) {
        for (int k = 0; k < logits.length; k++) {
            logits[k] = (float) Math.tanh(logits[k] / cap) * cap;
        }
    }

    /** Whether logitRows is 0, 1, ..., rows - 1. */
    private static boolean isEveryRow(int[] logitRows, int rows) {
        if (logitRows.length != rows) {
            return false;
        }
        for (int i = 0; i < rows; i++) {
            if (logitRows[i] != i) {
                return false;
            }
        }
        return true;
    }

    /** Checks the batch against its caches and reserves the blocks its positions need. */
    private void prepare(int[] tokens, BatchLayout batch) {
        if (tokens.length != batch.rows()) {
            throw new IllegalArgumentException(tokens.length + " tokens for a batch of " + batch.rows() + " rows");
        }
        Set<KvCache> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (BatchLayout.Segment segment : batch.segments()) {
            if (!seen.add(segment.cache())) {
                throw new IllegalArgumentException("two segments of one batch share a KV cache");
            }
            checkFits(segment.length(), segment.startPos(), segment.cache());
            if (!segment.cache().reserve(segment.end())) {
                throw new IllegalStateException("the KV cache pool has no free block left for " + segment.end()
                        + " positions");
            }
        }
        if (longRope != null) {
            longRope.decideNewSequences(batch);
        }
    }

    private static void setLengths(BatchLayout batch) {
        for (BatchLayout.Segment segment : batch.segments()) {
            segment.cache().setLength(segment.end());
        }
    }

    /**
     * Embeds the tokens (the batch's rows, then any padding rows) and runs every decoder block; the residual stream is
     * left in the workspace's x.
     */
    private void decoderLayers(int[] tokens, BatchLayout batch, Workspace ws) {
        int n = tokens.length;
        float eps = (float) config.normEps();
        int d = config.hiddenSize();
        int ff = config.intermediateSize();

        backend.embed(weights.embeddings(), tokens, ws.x);
        if (config.gemma() != null) {
            backend.scale(ws.x, n * d, (float) config.gemma().embeddingScale());
        }
        // Each residual add is fused with the RMSNorm that follows it (Backend.addRmsNorm): the first layer's input
        // norm stands alone, the last layer's final add too (the final norm runs on the wanted rows only).
        backend.rmsNorm(ws.x, n, weights.layers().getFirst().attentionNorm(), eps, ws.normed);
        for (int layer = 0; layer < config.numLayers(); layer++) {
            Weights.Layer w = weights.layers().get(layer);

            // Attention block: x += o_proj(attention(rope(q), rope(k), v)) of the normed stream.
            WeightMatrix[] qkv = {w.query(), w.key(), w.value()};
            if (longRope == null && w.queryBias() == null && w.keyBias() == null && w.valueBias() == null
                    && w.queryNorm() == null) { // the products, then RoPE and the KV write, which a backend may fuse
                backend.projectRopeStoreKv(ws.normed, n, qkv, ws.q, ws.k, ws.v, batch, layer, config.numHeads(),
                        config.numKvHeads(), config.headDim(), ropeFrequencies[layer]);
            } else {
                backend.matmuls(ws.normed, n, qkv, new ActivationBuffer[] {ws.q, ws.k, ws.v});
                addBias(ws.q, n, w.queryBias());
                addBias(ws.k, n, w.keyBias());
                addBias(ws.v, n, w.valueBias());
                if (w.queryNorm() != null) { // Qwen3, Gemma 3: each head's q and k RMS-normalised, in place
                    backend.rmsNorm(ws.q, n * config.numHeads(), w.queryNorm(), eps, ws.q);
                    backend.rmsNorm(ws.k, n * config.numKvHeads(), w.keyNorm(), eps, ws.k);
                }
                if (longRope != null) {
                    rope(ws.q, batch, config.numHeads(), ropeFrequencies[layer]);
                    longRope.scaleQueries(backend, ws.q, n, config.numHeads() * config.headDim());
                    rope(ws.k, batch, config.numKvHeads(), ropeFrequencies[layer]);
                    backend.storeKv(ws.k, ws.v, batch, layer);
                } else { // the keys rotated on their way into the cache, the queries by the same pass
                    backend.ropeQueriesAndStoreKv(ws.q, config.numHeads(), ws.k, ws.v, batch, layer,
                            config.numKvHeads(), config.headDim(), ropeFrequencies[layer]);
                }
            }
            backend.attention(ws.q, batch, layer, attentionShapes[layer], ws.attended);
            if (w.attentionSubNorm() != null) { // BitNet
                backend.rmsNorm(ws.attended, n, w.attentionSubNorm(), eps, ws.attended);
            }
            if (w.outputBias() == null && w.postAttentionNorm() == null) {
                backend.matmulAddRmsNorm(ws.attended, n, w.output(), ws.projected, ws.x, w.ffnNorm(), eps, ws.normed);
            } else {
                linear(ws.attended, n, w.output(), w.outputBias(), ws.projected);
                if (w.postAttentionNorm() != null) { // Gemma norms the block's output before the residual add
                    backend.rmsNorm(ws.projected, n, w.postAttentionNorm(), eps, ws.projected);
                }
                backend.addRmsNorm(ws.x, ws.projected, n, w.ffnNorm(), eps, ws.normed);
            }

            // Feed-forward block: x += down(silu(gate(h)) * up(h)) of the normed stream (Gemma: gelu, not silu).
            if (config.gemma() == null && !config.bitnet()) {
                backend.swigluProducts(ws.normed, n, w.gate(), w.up(), ws.gate, ws.up);
            } else {
                backend.matmuls(ws.normed, n, new WeightMatrix[] {w.gate(), w.up()},
                        new ActivationBuffer[] {ws.gate, ws.up});
                if (config.gemma() != null) {
                    backend.geglu(ws.gate, ws.up, n * ff);
                } else { // BitNet: relu(gate)² * up, RMS-normalised before down_proj
                    backend.reluSquaredGlu(ws.gate, ws.up, n * ff);
                    backend.rmsNorm(ws.gate, n, w.ffnSubNorm(), eps, ws.gate);
                }
            }
            boolean last = layer + 1 == config.numLayers();
            if (!last && w.postFfnNorm() == null) {
                backend.matmulAddRmsNorm(ws.gate, n, w.down(), ws.projected, ws.x,
                        weights.layers().get(layer + 1).attentionNorm(), eps, ws.normed);
                continue;
            }
            backend.matmul(ws.gate, n, w.down(), ws.projected);
            if (w.postFfnNorm() != null) {
                backend.rmsNorm(ws.projected, n, w.postFfnNorm(), eps, ws.projected);
            }
            if (!last) {
                backend.addRmsNorm(ws.x, ws.projected, n, weights.layers().get(layer + 1).attentionNorm(), eps,
                        ws.normed);
            } else {
                backend.add(ws.x, ws.projected, n * d);
            }
        }
    }

    /**
     * The activation buffers of a forward pass, allocated by the backend for a batch of up to {@code rows} tokens and
     * {@code logitRows} sampled rows, and reused by every pass that fits them.
     */
    private final class Workspace implements AutoCloseable {
        final int rows;
        final int logitRows;
        final ActivationBuffer x;        // residual stream [rows, d]
        final ActivationBuffer normed;   // [rows, d]
        final ActivationBuffer q;        // [rows, q]
        final ActivationBuffer k;        // [rows, kv]
        final ActivationBuffer v;        // [rows, kv]
        final ActivationBuffer attended; // [rows, q]
        final ActivationBuffer projected; // [rows, d]
        final ActivationBuffer gate;     // [rows, ff]
        final ActivationBuffer up;       // [rows, ff]
        final ActivationBuffer wanted;   // [logitRows, d]
        final ActivationBuffer logits;   // [logitRows, vocab]

        Workspace(int rows, int logitRows) {
            this.rows = rows;
            this.logitRows = logitRows;
            long d = config.hiddenSize();
            long qDim = attentionShapes[0].queryDim();
            long kvDim = attentionShapes[0].kvDim();
            long ff = config.intermediateSize();
            x = backend.allocate(rows * d);
            normed = backend.allocate(rows * d);
            q = backend.allocate(rows * qDim);
            k = backend.allocate(rows * kvDim);
            v = backend.allocate(rows * kvDim);
            attended = backend.allocate(rows * qDim);
            projected = backend.allocate(rows * d);
            gate = backend.allocate(rows * ff);
            up = backend.allocate(rows * ff);
            wanted = backend.allocate(logitRows * d);
            logits = backend.allocate((long) logitRows * config.vocabSize());
        }

        @Override
        public void close() {
            for (ActivationBuffer b : new ActivationBuffer[]{x, normed, q, k, v, attended, projected, gate, up, wanted,
                    logits}) {
                b.close();
            }
        }
    }

    /**
     * Frees the activation buffers of the forward pass now (off-heap on the CPU backend, device memory on CUDA) rather
     * than when the backend closes; a later pass allocates them again. For an engine shutting down.
     */
    public synchronized void releaseBuffers() {
        if (workspace != null) {
            workspace.close();
            workspace = null;
        }
    }

    private static int powerOfTwoAtLeast(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }

    /** A workspace that fits; grown to the next power of two so a few sizes serve every batch. */
    private Workspace workspace(int rows, int logitRows) {
        if (workspace == null || workspace.rows < rows || workspace.logitRows < logitRows) {
            int r = Math.max(rows, workspace == null ? 1 : workspace.rows);
            int l = Math.max(logitRows, workspace == null ? 1 : workspace.logitRows);
            if (workspace != null) {
                workspace.close();
            }
            workspace = new Workspace(powerOfTwoAtLeast(r), powerOfTwoAtLeast(l));
        }
        return workspace;
    }

    private void rope(ActivationBuffer x, BatchLayout batch, int heads, float[] frequencies) {
        if (longRope != null) {
            longRope.rotate(backend, x, batch, heads, config.headDim());
        } else {
            backend.rope(x, batch, heads, config.headDim(), frequencies);
        }
    }

    private void linear(ActivationBuffer in, int n, WeightMatrix weight, float[] bias, ActivationBuffer out) {
        backend.matmul(in, n, weight, out);
        addBias(out, n, bias);
    }

    private void addBias(ActivationBuffer out, int n, float[] bias) {
        if (bias != null) {
            backend.addBias(out, n, bias);
        }
    }

    private void checkFits(int n, int startPos, KvCache cache) {
        if (n == 0) {
            throw new IllegalArgumentException("no tokens to run");
        }
        // startPos below the cache length rewinds (the later positions are overwritten); a gap would read garbage.
        if (startPos < 0 || startPos > cache.length()) {
            throw new IllegalArgumentException("start position " + startPos + " leaves a gap after the "
                    + cache.length() + " positions already in the KV cache");
        }
        long end = (long) startPos + n;
        if (end > config.contextLength()) {
            throw new IllegalArgumentException(n + " tokens from position " + startPos + " exceed the context length of "
                    + config.contextLength());
        }
        if (end > cache.capacity()) {
            throw new IllegalArgumentException(n + " tokens from position " + startPos + " exceed the KV cache capacity of "
                    + cache.capacity());
        }
    }
}
