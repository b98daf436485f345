package io.zse.api;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.concurrent.TimeUnit;

/**
 * Lets an HTTP/1 connection that is closed over a broken request body say why (400 {@code invalid_body}) first:
 * <ul>
 * <li>Vert.x closes the connection the moment its decoder fails (a chunk size that is not hex), in the middle of the
 * read, before the answer written for the failure is flushed: a close here waits (a moment at most) for what was
 * written;</li>
 * <li>a client that ends its side (FIN) before the body it announced is complete would be closed on by Netty at once;
 * half-closure is allowed instead, and the end of input is reported to Vert.x as a broken body. At any other time the
 * end of input closes the connection as before, so a client that hangs up still cancels its generation.</li>
 * </ul>
 * Installed by {@link #install} when a connection's first request begins (Vert.x 4 offers no hook earlier), just before
 * Vert.x's own handler, so it sees what the decoder reads and what Vert.x writes.
 */
final class ConnectionGuard extends ChannelDuplexHandler {
    private static final String NAME = "zse-connection-guard";
    /** The name Vert.x gives its connection handler, the last in the pipeline. */
    private static final String VERTX_HANDLER = "handler";
    /** How long a close waits for what was written before it to reach the client. */
    private static final long FLUSH_GRACE_MS = 1000;

    /** A request's headers have passed and its last content has not. */
    private boolean bodyIncomplete;

    private ConnectionGuard(boolean bodyIncomplete) {
        this.bodyIncomplete = bodyIncomplete;
    }

    /** Guards the connection, once; {@code bodyIncomplete}: whether the request that begins now has more body to come. */
    static void install(Channel channel, boolean bodyIncomplete) {
        if (channel.pipeline().get(NAME) == null && channel.pipeline().get(VERTX_HANDLER) != null) {
            channel.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
            channel.pipeline().addBefore(VERTX_HANDLER, NAME, new ConnectionGuard(bodyIncomplete));
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) {
            bodyIncomplete = true;
        }
        if (msg instanceof LastHttpContent) {
            bodyIncomplete = false;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (!(event instanceof ChannelInputShutdownEvent)) {
            ctx.fireUserEventTriggered(event);
        } else if (bodyIncomplete) {
            // Vert.x fails the request (the failure route answers 400) and closes the connection
            ctx.fireExceptionCaught(new PrematureChannelClosureException(
                    "the connection was half-closed before the request body was complete"));
        } else {
            ctx.close();
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        ChannelFuture flushed = ctx.writeAndFlush(Unpooled.EMPTY_BUFFER);
        if (flushed.isDone()) {
            ctx.close(promise);
            return;
        }
        // a client that does not read must not hold the connection open: the close waits for the flush only so long
        ScheduledFuture<?> forced = ctx.executor().schedule(() -> ctx.close(promise), FLUSH_GRACE_MS, TimeUnit.MILLISECONDS);
        flushed.addListener(done -> {
            if (forced.cancel(false)) {
                ctx.close(promise);
            }
        });
    }
}
