package io.zse.bench.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;

import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;

/**
 * One greedy generation through Jlama's public forward API, timed like {@code zse bench}: the prompt as one batch
 * (prefill, up to the first sampled token), then single-token steps (decode). The same calls generate() makes, minus
 * tokenizing, so the prompt can be the same synthetic ids zse bench feeds its own engine.
 */
final class TimedGeneration {
    /** Wall-clock nanoseconds of the prefill (to the first token) and of the remaining decode steps. */
    record Run(long prefillNanos, long decodeNanos) {
        double prefillSeconds() {
            return prefillNanos / 1e9;
        }

        double decodeSeconds() {
            return Math.max(1, decodeNanos) / 1e9;
        }
    }

    private final AbstractModel model;
    private final int[] promptIds;
    private final int decode;

    TimedGeneration(AbstractModel model, int promptTokens, int decode) {
        this.model = model;
        this.promptIds = syntheticPrompt(promptTokens, model.getConfig().vocabularySize);
        this.decode = decode;
    }

    Run run() {
        try (KvBufferCache caches = new KvBufferCache(model);
             KvBufferCache.KvBuffer kv = caches.getKvBuffer(UUID.randomUUID());
             AbstractTensor logits = model.makeDenseTensor(model.getConfig().vocabularySize)) {
            long prefillStart = System.nanoTime();
            int token;
            try (AbstractTensor hidden = model.batchForward(promptIds, 0, kv)) {
                token = model.sample(hidden.slice(hidden.shape().first() - 1), 0.0f, 0.0f, logits);
            }
            long decodeStart = System.nanoTime();
            for (int position = promptIds.length; position < promptIds.length + decode - 1; position++) {
                try (AbstractTensor hidden = model.forward(token, position, kv, Optional.empty())) {
                    token = model.sample(hidden, 0.0f, 0.0f, logits);
                }
            }
            return new Run(decodeStart - prefillStart, System.nanoTime() - decodeStart);
        }
    }

    /**
     * The prompt zse bench feeds its own engine (BenchCommand.syntheticPrompt: keep the two in step), so both engines
     * see the same ids; speed does not depend on which tokens they are.
     */
    private static int[] syntheticPrompt(int length, int vocab) {
        return IntStream.range(0, length).map(i -> (int) ((i * 7919L + 3) % vocab)).toArray();
    }
}
