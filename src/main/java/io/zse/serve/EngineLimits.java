package io.zse.serve;

/**
 * Admission and batching limits of one engine.
 *
 * @param maxRunning     sequences decoded together in one batch
 * @param maxQueued      sequences waiting for a place in the batch; beyond this, requests are refused
 * @param maxModelLength caps the model's context; 0 = the model's own context length
 * @param maxBatchTokens tokens one step runs: a decode token per running sequence plus chunks of prompts
 */
public record EngineLimits(int maxRunning, int maxQueued, int maxModelLength, int maxBatchTokens) {
    public EngineLimits {
        if (maxRunning < 1 || maxQueued < 0 || maxModelLength < 0 || maxBatchTokens < 1) {
            throw new IllegalArgumentException("bad engine limits: " + maxRunning + " running, " + maxQueued
                    + " queued, model length " + maxModelLength + ", " + maxBatchTokens + " tokens per step");
        }
    }

    public static final EngineLimits DEFAULT = new EngineLimits(64, 256, 4096, 512);
}
