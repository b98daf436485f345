package io.zse.api;

import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import java.util.List;

/**
 * CORS for browser clients on other origins ({@code zse.cors.origins}): a request from an allowed origin gets
 * {@code Access-Control-Allow-Origin} (errors included, so the page can read them), and a preflight is answered here,
 * before the API key is asked for (browsers send it without credentials). Without the setting, no origin is allowed
 * and browsers keep the API to same-origin pages (the playground at /).
 */
@ApplicationScoped
public class CrossOrigin {
    /** Headers a page may read besides the simple ones: rate limits and when to retry. */
    private static final String EXPOSED = "Retry-After, x-ratelimit-limit-requests, x-ratelimit-remaining-requests, "
            + "x-ratelimit-reset-requests, x-ratelimit-limit-tokens, x-ratelimit-remaining-tokens, "
            + "x-ratelimit-reset-tokens";

    @Inject
    ZseConfig config;

    void routes(@Observes Router router) {
        List<String> origins = config.cors().origins().orElse(List.of());
        router.route().order(-200).handler(ctx -> handle(ctx, origins));
    }

    private static void handle(RoutingContext ctx, List<String> origins) {
        HttpServerRequest request = ctx.request();
        String origin = request.getHeader("Origin");
        if (origin == null) {
            ctx.next();
            return;
        }
        HttpServerResponse response = ctx.response();
        boolean any = origins.contains("*");
        boolean allowed = any || origins.contains(origin);
        boolean preflight = request.method() == HttpMethod.OPTIONS
                && request.getHeader("Access-Control-Request-Method") != null;
        if (allowed) {
            response.putHeader("Access-Control-Allow-Origin", any ? "*" : origin);
            if (!any) {
                response.putHeader("Vary", "Origin");
            }
        }
        if (!preflight) {
            if (allowed) {
                response.putHeader("Access-Control-Expose-Headers", EXPOSED);
            }
            ctx.next();
            return;
        }
        if (!allowed) {
            response.setStatusCode(403).end();
            return;
        }
        String headers = request.getHeader("Access-Control-Request-Headers");
        response.putHeader("Access-Control-Allow-Methods", "GET, POST, HEAD, OPTIONS")
                .putHeader("Access-Control-Allow-Headers", headers != null ? headers : "Authorization, Content-Type")
                .putHeader("Access-Control-Max-Age", "600")
                .setStatusCode(204).end();
    }
}
