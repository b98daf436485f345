package io.zse.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.zse.serve.LoadedModel;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.Map;
import java.util.Set;

/**
 * The OpenAI-compatible /v1 API on Vert.x routes (so SSE is written byte for byte as OpenAI does, and a client
 * disconnect reaches the engine). Requests are parsed and admitted on worker threads; the engine thread streams.
 */
@ApplicationScoped
public class OpenAiRoutes {
    private static final Logger LOG = Logger.getLogger(OpenAiRoutes.class);
    static final String CALLER = "zse.caller";
    /** Funqy serves each function at /{name}; these names cannot collide with /v1, /q or the health path. */
    static final String FUNCTION_PATHS = "/fn-[a-z-]+";
    /** Every path but Quarkus's own under /q: an unknown one, or a failure, is answered in OpenAI's error shape. */
    static final String API_PATHS = "^(?!/q(/|$)).*";
    private static final Set<String> POST_PATHS = Set.of("/v1/chat/completions", "/v1/completions", "/v1/embeddings");

    @Inject
    ZseConfig config;

    @Inject
    ApiGate gate;

    @Inject
    Completions completions;

    @Inject
    Embeddings embeddings;

    void routes(@Observes Router router) {
        router.route("/v1/*").order(-100).handler(this::gate);
        router.routeWithRegex(FUNCTION_PATHS).order(-100).handler(this::gate);
        BodyHandler bodies = BodyHandler.create(false).setBodyLimit(config.maxBodyBytes());
        router.route("/v1/*").order(-99).handler(bodies);
        // Funqy would log bad JSON as an error with its stack trace; it gets the same strict parsing and 400 as /v1
        router.routeWithRegex(FUNCTION_PATHS).order(-99).handler(bodies);
        router.routeWithRegex(FUNCTION_PATHS).order(-98).handler(ctx -> {
            if (ctx.request().method() != HttpMethod.POST) {
                // Funqy would parse a GET's query as the body (a 400) and log any other method as its error
                throw CompletionFunctions.PATHS.contains(ctx.normalizedPath()) ? methodNotAllowed(ctx, "POST")
                        : unknownUrl(ctx);
            }
            parse(ctx);
            ctx.next();
        });

        router.post("/v1/chat/completions").blockingHandler(ctx -> generate(ctx, true), false);
        router.post("/v1/completions").blockingHandler(ctx -> generate(ctx, false), false);
        router.post("/v1/embeddings").blockingHandler(ctx -> HttpResponses.json(ctx.response(), 200,
                embeddings.create(parse(ctx), ctx.get(CALLER), ctx.response()::closed)), false);
        router.get("/v1/models").method(HttpMethod.HEAD).handler(ctx -> {
            LoadedModel m = gate.model();
            HttpResponses.json(ctx.response(), 200, OpenAiShapes.modelList(OpenAiShapes.model(m.id(), m.createdAt())));
        });
        router.get("/v1/models/:id").method(HttpMethod.HEAD).handler(ctx -> {
            LoadedModel m = gate.model();
            String id = ctx.pathParam("id");
            if (!id.equals(m.id())) {
                throw ApiException.notFound("The model '" + id + "' does not exist", "model", "model_not_found");
            }
            HttpResponses.json(ctx.response(), 200, OpenAiShapes.model(m.id(), m.createdAt()));
        });
        // after every other route (Funqy's functions, static resources): a wrong method on a /v1 route, or no such path
        router.routeWithRegex(API_PATHS).order(RouteConstants.ROUTE_ORDER_AFTER_DEFAULT + 1).handler(ctx -> {
            String path = ctx.normalizedPath();
            if (POST_PATHS.contains(path)) {
                throw methodNotAllowed(ctx, "POST");
            }
            if (path.startsWith("/v1/models")) {
                throw methodNotAllowed(ctx, "GET, HEAD");
            }
            throw unknownUrl(ctx);
        });
        // every failure outside /q (a 404 from a route included) is answered in OpenAI's shape
        router.routeWithRegex(API_PATHS).order(-100).failureHandler(this::failure);
    }

    /** API key, then the key's rate limits; health, /ping, OpenAPI and metrics never come here. */
    private void gate(RoutingContext ctx) {
        String caller = gate.authenticate(ctx.request().getHeader("Authorization"));
        ctx.put(CALLER, caller);
        boolean generation = ctx.request().method() == HttpMethod.POST;
        if (generation) {
            Map<String, String> headers = gate.admit(caller);
            headers.forEach(ctx.response()::putHeader);
        }
        ctx.next();
    }

    private void generate(RoutingContext ctx, boolean chat) {
        JsonNode body = parse(ctx);
        HttpServerResponse response = ctx.response();
        long heartbeat = Math.max(10, config.sseHeartbeat().toMillis());
        JsonSink[] json = new JsonSink[1];
        CompletionRun run = completions.start(body, chat, ctx.get(CALLER), response::closed, job -> {
            if (job.stream()) {
                return new SseStream(response, ctx.vertx(), heartbeat);
            }
            json[0] = new JsonSink();
            return json[0];
        });
        cancelWhenTheClientLeaves(ctx, run);
        if (json[0] != null) {
            json[0].result.whenComplete((result, error) -> {
                if (error == null) {
                    HttpResponses.json(response, 200, result);
                } else {
                    HttpResponses.error(response, Failures.toApi(error));
                }
            });
        }
    }

    /**
     * A client that goes away cancels its sequences; their KV caches are freed at the engine's next step. (An end
     * handler, not response.closeHandler: that would replace the routing context's, which the read timeouts rely on.)
     */
    static void cancelWhenTheClientLeaves(RoutingContext ctx, CompletionRun run) {
        ctx.addEndHandler(done -> {
            if (done.failed()) {
                run.cancel();
            }
        });
        if (ctx.response().closed()) { // gone while the request was admitted, before the handler was in place
            run.cancel();
        }
    }

    static JsonNode parse(RoutingContext ctx) {
        return JsonBody.parse(ctx.body() == null ? null : ctx.body().asString());
    }

    private void failure(RoutingContext ctx) {
        HttpServerResponse response = ctx.response();
        if (ClientFaults.causedByClient(ctx)) {
            ClientFaults.log(ctx);
            HttpResponses.error(response, ClientFaults.unreadable(ctx.failure()));
            return;
        }
        if (ctx.failure() == null) {
            ApiException e = switch (ctx.statusCode()) {
                case 413 -> ApiException.tooLarge(config.maxBodyBytes());
                case 400 -> ApiException.invalid("We could not parse the JSON body of your request", null, "invalid_json");
                case 404 -> unknownUrl(ctx);
                case 405 -> methodNotAllowed(ctx, null);
                default -> ApiException.internal(Failures.incident(null));
            };
            HttpResponses.error(response, e);
            return;
        }
        HttpResponses.error(response, Failures.toApi(ctx.failure()));
    }

    private static ApiException methodNotAllowed(RoutingContext ctx, String allowed) {
        return ApiException.methodNotAllowed(ctx.request().method() + " is not allowed on " + ctx.normalizedPath(),
                allowed);
    }

    private static ApiException unknownUrl(RoutingContext ctx) {
        return ApiException.notFound("Invalid URL (" + ctx.request().method() + " " + ctx.normalizedPath() + ")", null,
                "unknown_url");
    }
}
