package io.zse.api;

import io.netty.handler.codec.CodecException;
import io.vertx.core.http.HttpClosedException;
import io.vertx.ext.web.RoutingContext;
import org.jboss.logging.Logger;

import java.io.IOException;

/**
 * Tells failures the client caused (it hung up, or sent a body that cannot be read: a bad chunk size, fewer bytes than
 * its Content-Length) from our own. Theirs are logged at DEBUG in one line; only ours are errors with an incident id.
 */
final class ClientFaults {
    private static final Logger LOG = Logger.getLogger(ClientFaults.class);

    private ClientFaults() {
    }

    static boolean causedByClient(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (failure == null || wraps(failure, ApiException.class)) {
            return false;
        }
        return hungUp(failure) || undecodable(failure);
    }

    static void log(RoutingContext ctx) {
        LOG.debugf("client fault on %s %s: %s", ctx.request().method(), ctx.normalizedPath(), ctx.failure());
    }

    /** What the client is told, if it still listens. */
    static ApiException unreadable(Throwable failure) {
        return ApiException.unreadableBody(hungUp(failure) ? "the connection closed before the request was read"
                : "the request body could not be read (a malformed chunk, or fewer bytes than its Content-Length)");
    }

    /**
     * Netty's HTTP decoder failing on the client's bytes (a chunk size that is not hex fails as a number), or the
     * client ending its side before the body was complete ({@link ConnectionGuard}).
     */
    private static boolean undecodable(Throwable failure) {
        return wraps(failure, CodecException.class) || wraps(failure, NumberFormatException.class);
    }

    private static boolean hungUp(Throwable failure) {
        // IOException covers ClosedChannelException and the connection resets
        return wraps(failure, HttpClosedException.class) || wraps(failure, IOException.class);
    }

    private static boolean wraps(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
