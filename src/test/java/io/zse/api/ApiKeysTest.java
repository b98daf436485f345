package io.zse.api;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ApiKeysTest {
    @Test
    void plainAndHashedKeysMatchAndIdentitiesNeverRevealTheKey() {
        String hashed = "sha256:" + HexFormat.of().formatHex(ApiKeys.sha256("secret-two"));
        ApiKeys keys = new ApiKeys(List.of("secret-one", " " + hashed.toUpperCase().replace("SHA256", "sha256") + " "));
        assertEquals(Optional.of("key-0"), keys.identify("secret-one"));
        assertEquals(Optional.of("key-1"), keys.identify("secret-two"));
        assertEquals(Optional.empty(), keys.identify("secret-three"));
        assertEquals(Optional.empty(), keys.identify(hashed), "the hash itself is not a key");
        assertTrue(new ApiKeys(List.of()).open());
        assertThrows(IllegalArgumentException.class, () -> new ApiKeys(List.of("sha256:abc")));
    }

    @Test
    void rateLimiterCountsRequestsAndTokensPerWindow() {
        RateLimiter limiter = new RateLimiter(0, 100);
        assertEquals("100", limiter.admit("k", 0).get("x-ratelimit-limit-tokens"));
        limiter.charge("k", 120);
        ApiException e = assertThrows(ApiException.class, () -> limiter.admit("k", 30_000));
        assertEquals(429, e.status());
        assertEquals(30, e.retryAfterSeconds());
        assertEquals("0", e.headers().get("x-ratelimit-remaining-tokens"));
        assertEquals("100", limiter.admit("k", 60_000).get("x-ratelimit-remaining-tokens"), "a new window");
    }
}
