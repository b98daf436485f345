package io.zse.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The configured API keys, held only as SHA-256 digests (a key may be configured as {@code sha256:<hex>} so it never
 * sits in plain text). A presented key is hashed and compared with every digest in constant time.
 */
public final class ApiKeys {
    private final List<byte[]> digests;

    public ApiKeys(List<String> configured) {
        this.digests = configured.stream().map(String::strip).filter(k -> !k.isEmpty()).map(ApiKeys::digestOf).toList();
    }

    private static byte[] digestOf(String configured) {
        if (configured.regionMatches(true, 0, "sha256:", 0, 7)) {
            String hex = configured.substring(7);
            if (!hex.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException("zse.api-keys: a sha256: entry needs 64 hex digits");
            }
            return HexFormat.of().parseHex(hex);
        }
        return sha256(configured);
    }

    /** True when no keys are configured: the API is open. */
    public boolean open() {
        return digests.isEmpty();
    }

    /** The matching key's identity ("key-N", never the key), or empty when it matches none. */
    public Optional<String> identify(String presented) {
        byte[] digest = sha256(presented);
        int match = -1;
        for (int i = 0; i < digests.size(); i++) {
            // no early exit: the time taken does not depend on which key matched
            if (MessageDigest.isEqual(digests.get(i), digest)) {
                match = i;
            }
        }
        return match < 0 ? Optional.empty() : Optional.of("key-" + match);
    }

    static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
