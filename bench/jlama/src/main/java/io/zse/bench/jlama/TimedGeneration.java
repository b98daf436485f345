package io.zse.bench.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;

import java.util.Optional;
import java.util.UUID;

/**
 * One greedy generation through Jlama's public forward API, timed like {@code zse bench}: the prompt as one batch
 * (prefill, up to the first sampled token), then single-token steps (decode). The same calls generate() makes, minus
 * tokenizing, so the prompt can be the same synthetic ids zse bench feeds its own engine.
 */
final class TimedGeneration {
    /** Wall-clock seconds of the prefill (to the first token) and of the remaining decode steps. */
    record Run(double prefillSeconds, double decodeSeconds) {
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
            long start = System.nanoTime();
            int token;
            try (AbstractTensor hidden = model.batchForward(promptIds, 0, kv)) {
                token = model.sample(hidden.slice(hidden.shape().first() - 1), 0.0f, 0.0f, logits);
            }
            long firstToken = System.nanoTime();
            for (int i = 1; i < decode; i++) {
                try (AbstractTensor hidden = model.forward(token, promptIds.length + i - 1, kv, Optional.empty())) {
                    token = model.sample(hidden, 0.0f, 0.0f, logits);
                }
            }
            long end = System.nanoTime();
            return new Run((firstToken - start) / 1e9, Math.max(1e-9, (end - firstToken) / 1e9));
        }
    }

    /** The ids zse bench uses: spread over the vocabulary (speed does not depend on which tokens). */
    private static int[] syntheticPrompt(int length, int vocab) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = (int) ((i * 7919L + 3) % vocab);
        }
        return ids;
    }
}
