package io.zse.api;

import io.zse.serve.LoadedModel;
import io.zse.serve.ModelHost;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.util.List;
import java.util.Map;

/** What every /v1 route and Funqy function checks first: the API key, the key's rate limits, a ready model. */
@ApplicationScoped
public class ApiGate {
    @Inject
    ZseConfig config;

    @Inject
    ModelLifecycle lifecycle;

    private ApiKeys keys;
    private RateLimiter limiter;

    @PostConstruct
    void init() {
        keys = new ApiKeys(config.apiKeys().orElse(List.of()));
        limiter = new RateLimiter(config.requestsPerMinute(), config.tokensPerMinute());
    }

    /** The caller's identity for rate limiting; 401 when keys are configured and the header holds none of them. */
    public String authenticate(String authorization) {
        if (keys.open()) {
            return "anonymous";
        }
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw ApiException.unauthorized("You didn't provide an API key. You need to provide your API key in an "
                    + "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).");
        }
        return keys.identify(authorization.substring(7).strip())
                .orElseThrow(() -> ApiException.unauthorized("Incorrect API key provided."));
    }

    /** Counts a request against the caller's limits; the X-RateLimit-* headers to send, or a 429. */
    public Map<String, String> admit(String caller) {
        return limiter.admit(caller, System.currentTimeMillis());
    }

    public void charge(String caller, int tokens) {
        limiter.charge(caller, tokens);
    }

    /**
     * The served model, or 503 while it loads, after it failed, or during shutdown. Its file is looked at first (one
     * fstat), so a file truncated since the last request fails the model here rather than the request that reads it.
     */
    public LoadedModel model() {
        ModelHost.State state = lifecycle.checkedState();
        return switch (state.phase()) {
            case READY -> state.model();
            case LOADING -> throw ApiException.unavailable("the model is still loading", 5);
            case FAILED -> throw state.model() == null
                    ? ApiException.unavailable("the model failed to load: " + state.failure(), 30)
                    : ApiException.outOfService(state.failure());
            case DRAINING, STOPPED -> throw ApiException.unavailable("the server is shutting down", 5);
        };
    }
}
