package io.zse.api;

import io.netty.channel.Channel;
import io.netty.handler.timeout.IdleStateHandler;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.util.concurrent.TimeUnit;

/**
 * Read timeouts, so half-sent requests cannot hold connections (and file descriptors) open:
 * <ul>
 * <li>a new connection that goes {@code zse.request-header-timeout} without traffic before its request's headers are
 * complete is closed (Vert.x's idle timeout, set here: headers that never arrive never reach a route);</li>
 * <li>a request whose body is not complete {@code zse.request-body-timeout} after its headers gets 408 and the
 * connection is closed;</li>
 * <li>while a request is in flight there is no idle timeout at all, so a long generation or a slow SSE stream is never
 * cut; once its response has ended, a kept-alive connection with no traffic for {@code zse.idle-timeout} is closed.</li>
 * </ul>
 * Vert.x 4 has no per-request idle setting, so the HTTP/1 connection's Netty idle handler is taken out for the
 * request and put back after it; HTTP/2 connections keep the connection-wide timeout.
 */
@ApplicationScoped
public class RequestTimeouts implements HttpServerOptionsCustomizer {
    /** The name Vert.x gives its idle handler in the connection's pipeline. */
    private static final String IDLE_HANDLER = "idle";

    @Inject
    ZseConfig config;

    @Override
    public void customizeHttpServer(HttpServerOptions options) {
        options.setIdleTimeout((int) config.requestHeaderTimeout().toMillis()).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    }

    @Override
    public void customizeHttpsServer(HttpServerOptions options) {
        customizeHttpServer(options);
    }

    void routes(@Observes Router router) {
        // before Quarkus's body handler (RouteConstants.ROUTE_ORDER_BODY_HANDLER, there for Funqy), which reads the
        // whole body before the next route runs: a route after it never sees a request whose body is late
        router.route().order(RouteConstants.ROUTE_ORDER_BODY_HANDLER - 1).handler(this::requestStarted);
    }

    private void requestStarted(RoutingContext ctx) {
        HttpServerRequest request = ctx.request();
        Channel channel = http1Channel(request);
        if (channel != null) {
            ConnectionGuard.install(channel, !request.isEnded());
            if (channel.pipeline().get(IDLE_HANDLER) != null) {
                channel.pipeline().remove(IDLE_HANDLER);
            }
        }
        long bodyTimer = request.isEnded() ? -1
                : ctx.vertx().setTimer(config.requestBodyTimeout().toMillis(), id -> bodyTimedOut(ctx));
        // called when the response ends and when the connection closes first: the timer goes on either path
        ctx.addEndHandler(done -> {
            if (bodyTimer >= 0) {
                ctx.vertx().cancelTimer(bodyTimer);
            }
            if (channel != null && done.succeeded() && channel.isActive() && channel.pipeline().get(IDLE_HANDLER) == null) {
                channel.pipeline().addFirst(IDLE_HANDLER,
                        new IdleStateHandler(0, 0, config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS));
            }
        });
        ctx.next();
    }

    private void bodyTimedOut(RoutingContext ctx) {
        if (ctx.request().isEnded() || ctx.response().headWritten() || ctx.response().closed()) {
            return;
        }
        HttpResponses.error(ctx.response(), ApiException.timedOut("the request body did not arrive within "
                + config.requestBodyTimeout().toMillis() + " ms")).onComplete(written -> ctx.request().connection().close());
    }

    /** The Netty channel of an HTTP/1 connection, or null (HTTP/2 multiplexes requests on one connection). */
    private static Channel http1Channel(HttpServerRequest request) {
        if (request.version() == HttpVersion.HTTP_2 || !(request.connection() instanceof ConnectionBase connection)) {
            return null;
        }
        return connection.channel();
    }
}
