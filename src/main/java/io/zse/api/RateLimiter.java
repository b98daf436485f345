package io.zse.api;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Requests and tokens per minute for each API key, in fixed one-minute windows. Tokens are charged when a request
 * ends (prompt + generated), so a request is refused once the window's tokens are spent.
 */
public final class RateLimiter {
    private final int requestsPerMinute;
    private final int tokensPerMinute;
    private final Map<String, Window> windows = new ConcurrentHashMap<>();

    public RateLimiter(int requestsPerMinute, int tokensPerMinute) {
        this.requestsPerMinute = requestsPerMinute;
        this.tokensPerMinute = tokensPerMinute;
    }

    private static final class Window {
        long start;
        int requests;
        long tokens;
    }

    /** Counts one request for {@code key}; returns the X-RateLimit-* headers, or throws a 429. */
    public Map<String, String> admit(String key, long nowMillis) {
        if (requestsPerMinute <= 0 && tokensPerMinute <= 0) {
            return Map.of();
        }
        Window w = windows.computeIfAbsent(key, k -> new Window());
        synchronized (w) {
            if (nowMillis - w.start >= 60_000) {
                w.start = nowMillis;
                w.requests = 0;
                w.tokens = 0;
            }
            int resetSeconds = (int) Math.max(1, (w.start + 60_000 - nowMillis + 999) / 1000);
            boolean requestsSpent = requestsPerMinute > 0 && w.requests >= requestsPerMinute;
            boolean tokensSpent = tokensPerMinute > 0 && w.tokens >= tokensPerMinute;
            if (!requestsSpent && !tokensSpent) {
                w.requests++;
            }
            Map<String, String> headers = headers(w, resetSeconds);
            if (requestsSpent || tokensSpent) {
                throw ApiException.rateLimited("Rate limit reached for " + (requestsSpent ? "requests" : "tokens")
                        + " per minute: limit " + (requestsSpent ? requestsPerMinute : tokensPerMinute) + ". Please try "
                        + "again in " + resetSeconds + "s.", requestsSpent ? "requests" : "tokens", resetSeconds, headers);
            }
            return headers;
        }
    }

    /** Charges the tokens a finished request used. */
    public void charge(String key, int tokens) {
        Window w = windows.get(key);
        if (w != null) {
            synchronized (w) {
                w.tokens += tokens;
            }
        }
    }

    private Map<String, String> headers(Window w, int resetSeconds) {
        Map<String, String> h = new LinkedHashMap<>();
        if (requestsPerMinute > 0) {
            h.put("x-ratelimit-limit-requests", Integer.toString(requestsPerMinute));
            h.put("x-ratelimit-remaining-requests", Integer.toString(Math.max(0, requestsPerMinute - w.requests)));
            h.put("x-ratelimit-reset-requests", resetSeconds + "s");
        }
        if (tokensPerMinute > 0) {
            h.put("x-ratelimit-limit-tokens", Integer.toString(tokensPerMinute));
            h.put("x-ratelimit-remaining-tokens", Long.toString(Math.max(0, tokensPerMinute - w.tokens)));
            h.put("x-ratelimit-reset-tokens", resetSeconds + "s");
        }
        return h;
    }
}
