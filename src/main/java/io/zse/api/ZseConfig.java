package io.zse.api;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/** The server's settings ({@code zse.*} in application.properties, or env vars such as ZSE_MODEL_PATH). */
@ConfigMapping(prefix = "zse")
public interface ZseConfig {
    /** The .zse file to serve; without it the bundled demo model is served. */
    Optional<String> modelPath();

    /** The model's name in the API; default: the file name without .zse. */
    Optional<String> modelId();

    /** Where the demo model is converted to on first start. */
    @WithDefault("${user.home}/.cache/zse")
    String cacheDir();

    /** Compute backend: auto (CUDA when a usable device has room, else the CPU), cpu, cuda or cuda:N. */
    @WithDefault("auto")
    String backend();

    /** KV cache element type: f32, f16 or int8. */
    @WithDefault("f32")
    String kvCache();

    /** When every tensor's checksum is checked: not at all, after ready on a low-priority thread, or before ready. */
    @WithDefault("background")
    WeightVerification verifyWeights();

    /** Values of {@code zse.verify-weights}. */
    enum WeightVerification { OFF, BACKGROUND, STARTUP }

    /** CPU threads; default all cores. */
    OptionalInt threads();

    /** Browser clients on other origins (CORS). */
    Cors cors();

    interface Cors {
        /**
         * Origins whose pages may call the API (each as the browser sends it: https://app.example.com), or * for
         * any; none = no cross-origin access. Preflight requests are answered without an API key.
         */
        Optional<List<String>> origins();
    }

    /** Comma-separated API keys, each plain or sha256:HEX; none = no authentication. */
    Optional<List<String>> apiKeys();

    /** Sequences decoded together. */
    @WithDefault("64")
    int maxRunning();

    /** Requests waiting for a place in the batch; beyond it, 503. */
    @WithDefault("256")
    int maxQueued();

    /** Caps the context a request may use; 0 = the model's context length. */
    @WithDefault("4096")
    int maxModelLen();

    /**
     * Tokens one engine step runs: a decode token for each running sequence plus chunks of prompts. Larger prefills
     * long prompts in fewer steps; smaller keeps running streams' pauses short and the activations small.
     */
    @WithDefault("512")
    int maxBatchTokens();

    /**
     * Memory of the paged KV cache pool, allocated off-heap once at load: a size (4GiB, 512MiB) or a share of the
     * memory free then (0.5, 50%), capped at what max-running sequences of max-model-len tokens could use.
     */
    @WithDefault("0.5")
    String kvCacheMemory();

    /** Full blocks of computed tokens are kept and shared by later prompts that start the same way. */
    @WithDefault("true")
    boolean prefixCache();

    /** Largest accepted request body in bytes (413 above). */
    @WithDefault("10485760")
    long maxBodyBytes();

    /** Per API key: requests per minute, 0 = unlimited. */
    @WithDefault("0")
    int requestsPerMinute();

    /** Per API key: prompt + generated tokens per minute, 0 = unlimited. */
    @WithDefault("0")
    int tokensPerMinute();

    /** Time in-flight requests get to finish at shutdown before they are cancelled. */
    @WithDefault("25s")
    Duration shutdownGrace();

    /** SSE comment sent when a stream has been silent this long (queueing, long prefill). */
    @WithDefault("5s")
    Duration sseHeartbeat();

    /** A new connection silent this long before its request's headers are complete is closed. */
    @WithDefault("10s")
    Duration requestHeaderTimeout();

    /** A request body not complete this long after its headers gets 408 and the connection is closed. */
    @WithDefault("30s")
    Duration requestBodyTimeout();

    /** A kept-alive connection with no request in flight and no traffic for this long is closed. */
    @WithDefault("60s")
    Duration idleTimeout();

    /** Path of the RunPod-style health probe: 204 while loading, 200 ready, 503 failed (HEALTH_CHECK_PATH). */
    @WithDefault("/ping")
    String healthPath();

    /** A second port that answers the health probe (PORT_HEALTH); 0 or the HTTP port itself = none. */
    @WithDefault("0")
    int healthPort();
}
