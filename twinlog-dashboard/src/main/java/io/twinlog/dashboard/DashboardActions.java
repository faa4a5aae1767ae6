package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.server.plugin.DashboardBroker;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The dashboard's actions, {@code POST /api/v1/mirrors/{mirror}/topics/{topic}/{failover|pause|resume}}: checks the
 * request, then sends the very admin request {@code twinlog-mirrors.sh} sends (StopMirrorTopics, PauseMirrorTopics,
 * ResumeMirrorTopics) to this cluster with the operator's login ({@link ActionLogin}), so the broker's authorizer
 * decides. Only requests to the dashboard's own address from its own page are taken ({@link ActionOrigin}). Runs on a dashboard request thread and blocks it for the admin call (at most the admin timeout); a refusal
 * is an {@link HttpError}.
 */
final class DashboardActions {
    private static final Logger log = LoggerFactory.getLogger(DashboardActions.class);
    static final String PATH = DashboardServer.API + "/{mirror}/topics/{topic}/{failover|pause|resume}";
    private static final int MAX_BODY_BYTES = 4_096;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final DashboardBroker broker;
    private final boolean actionsEnabled;
    private final ActionOrigin origin;
    private final Runnable onChange;

    /** @param onChange called after the cluster accepted an action, so the next poll shows its effect */
    DashboardActions(DashboardBroker broker, boolean actionsEnabled, ActionOrigin origin, Runnable onChange) {
        this.broker = broker;
        this.actionsEnabled = actionsEnabled;
        this.origin = origin;
        this.onChange = onChange;
    }

    /** {@code {mirror}/topics/{topic}/{action}}: the same admin request as the command line's, as the operator. */
    ObjectNode act(HttpExchange exchange, String rest) throws IOException {
        Optional<String> foreign = origin.refusal(exchange.getRequestHeaders().getFirst("Host"),
                exchange.getRequestHeaders().getFirst("Origin"));
        if (foreign.isPresent()) {
            log.warn("[Dashboard broker={}] action refused, from {}: {}", broker.brokerId(),
                    exchange.getRemoteAddress(), foreign.get());
            throw new HttpError(403, foreign.get());
        }
        String[] parts = rest.split("/", -1);
        if (parts.length != 4 || !parts[1].equals("topics")) {
            throw new HttpError(404, "Expected POST " + PATH);
        }
        String mirror = decode(parts[0]);
        String topic = decode(parts[2]);
        Action action = Action.parse(parts[3]);
        if (!actionsEnabled) {
            throw new HttpError(403, "Dashboard actions are disabled on this broker (dashboard.actions.enable=false): "
                    + "use bin/twinlog-mirrors.sh");
        }
        // a cross-site form cannot send this content type without a CORS preflight, which is never answered
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        if (contentType == null || !contentType.toLowerCase().startsWith("application/json")) {
            throw new HttpError(415, "Actions take Content-Type: application/json");
        }
        readBody(exchange);
        if (mirror.isEmpty() || topic.isEmpty()) {
            throw new HttpError(400, "A mirror and a topic are needed");
        }
        Map<String, Object> local = broker.localClientConfigs()
                .orElseThrow(() -> new HttpError(503, "This broker has not registered yet"));
        Optional<ActionLogin.Credentials> operator = ActionLogin.Credentials.fromHeader(
                exchange.getRequestHeaders().getFirst("Authorization"));
        ActionLogin.Decision decision = ActionLogin.decide(local, operator, broker.authorizerEnabled());
        if (decision instanceof ActionLogin.Refused refused) {
            throw new HttpError(refused.status(), refused.message());
        }
        Map<String, Object> configs = DashboardServer.withTimeouts(((ActionLogin.Allowed) decision).clientConfigs());
        String who = operator.map(ActionLogin.Credentials::username).orElse("anonymous");
        log.info("[Dashboard broker={}] {} of topic {} on mirror {} asked by {} from {}", broker.brokerId(), action,
                topic, mirror, who, exchange.getRemoteAddress());
        Map<String, MirrorException> errors;
        try (MirrorAdmin admin = MirrorAdmin.create(configs)) {
            errors = switch (action) {
                case FAILOVER -> admin.stopMirrorTopics(mirror, List.of(topic), List.of());
                case PAUSE -> admin.pauseMirrorTopics(mirror, List.of(topic), List.of());
                case RESUME -> admin.resumeMirrorTopics(mirror, List.of(topic), List.of());
            };
        } catch (MirrorException e) {
            throw new HttpError(statusOf(e.errorCode()), e.getMessage());
        } catch (IOException e) {
            if (e.getCause() instanceof SaslAuthenticationException refused) {
                // the client ends the call at the first refused login (MirrorNetworkClient)
                throw new HttpError(401, "Login refused by the cluster: " + refused.getMessage());
            }
            throw new HttpError(503, "This cluster did not answer: " + e.getMessage());
        }
        if (!errors.isEmpty()) {
            Map.Entry<String, MirrorException> first = errors.entrySet().iterator().next();
            throw new HttpError(statusOf(first.getValue().errorCode()), first.getKey() + ": " + first.getValue().getMessage());
        }
        onChange.run();
        ObjectNode ok = MAPPER.createObjectNode();
        ok.put("mirror", mirror);
        ok.put("topic", topic);
        ok.put("action", action.path);
        ok.put("result", "accepted");
        return ok;
    }

    private static int statusOf(short code) {
        if (code == MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code
                || code == Errors.CLUSTER_AUTHORIZATION_FAILED.code()
                || code == Errors.TOPIC_AUTHORIZATION_FAILED.code()) {
            return 403;
        }
        if (code == MirrorErrors.UNKNOWN_CLUSTER_MIRROR.code || code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()) {
            return 404;
        }
        if (code == Errors.SASL_AUTHENTICATION_FAILED.code()) {
            return 401;
        }
        return 409;
    }

    private static String decode(String segment) {
        try {
            return URLDecoder.decode(segment, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new HttpError(400, "Malformed path segment: " + segment);
        }
    }

    /** Reads (and bounds) the body; actions take no parameters beyond the path, so it must be a JSON value. */
    private static void readBody(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readNBytes(MAX_BODY_BYTES + 1);
        if (body.length > MAX_BODY_BYTES) {
            throw new HttpError(413, "Request body over " + MAX_BODY_BYTES + " bytes");
        }
        if (body.length > 0) {
            try {
                MAPPER.readTree(body);
            } catch (IOException e) {
                throw new HttpError(400, "Request body is not JSON: " + e.getMessage());
            }
        }
    }

    /** The actions the page offers, by the last path segment. */
    enum Action {
        FAILOVER("failover"), PAUSE("pause"), RESUME("resume");

        final String path;

        Action(String path) {
            this.path = path;
        }

        static Action parse(String segment) {
            for (Action a : values()) {
                if (a.path.equals(segment)) {
                    return a;
                }
            }
            throw new HttpError(404, "Unknown action '" + segment + "': failover, pause or resume");
        }
    }
}
