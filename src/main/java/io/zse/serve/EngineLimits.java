package io.zse.serve;

/**
 * Admission and batching limits of one engine.
 *
 * @param maxRunning           sequences decoded together in one batch
 * @param maxQueued            sequences waiting for a place in the batch; beyond this, requests are refused
 * @param maxModelLength       caps the model's context (and so each KV cache); 0 = the model's own context length
 * @param prefillTokensPerStep prompt tokens prefilled between two decode steps (at least one prompt always is)
 */
public record EngineLimits(int maxRunning, int maxQueued, int maxModelLength, int prefillTokensPerStep) {
    public EngineLimits {
        if (maxRunning < 1 || maxQueued < 0 || maxModelLength < 0 || prefillTokensPerStep < 1) {
            throw new IllegalArgumentException("bad engine limits: " + maxRunning + " running, " + maxQueued
                    + " queued, model length " + maxModelLength + ", " + prefillTokensPerStep + " prefill tokens/step");
        }
    }

    public static final EngineLimits DEFAULT = new EngineLimits(64, 256, 4096, 2048);
}
