package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorAdmin.MirrorDescription;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.common.HttpListener;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.server.plugin.DashboardBroker;
import io.twinlog.server.plugin.DashboardFactory;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The mirror dashboard of one broker ({@code dashboard.listener}): a page served from this jar ({@code /}, with its
 * script and style sheet) that polls the JSON document {@code GET /api/v1/mirrors} every few seconds, and, with
 * {@code dashboard.actions.enable}, {@code POST /api/v1/mirrors/{mirror}/topics/{topic}/{failover|pause|resume}}.
 * The page also polls {@code GET /api/v1/background-tasks} ({@link BackgroundTasksView}), this broker's periodic tasks,
 * answered from memory without a cluster call, so a task that stopped working shows even while the cluster does not
 * answer.
 *
 * <p>Data and actions go through the mirror admin API ({@link MirrorAdmin}) against this cluster's inter-broker
 * listener, as {@code twinlog-mirrors.sh} would: the document is DescribeClusterMirrors' answer (read with the
 * broker's own login, so the dashboard listener must be trusted, like a JMX port) laid out by {@link DashboardView};
 * an action ({@link DashboardActions}) is the same request as the command's, sent with the operator's login
 * ({@link ActionLogin}) so the broker's authorizer decides. This class is the HTTP shell: threads, routing, the
 * document's cache, answers.
 *
 * <p>Threads: the JDK server's dispatcher accepts and reads requests, {@value #THREADS} request threads answer them,
 * with {@value #QUEUED_REQUESTS} waiting at most; beyond that the dispatcher closes the connection unanswered (it
 * never runs a handler itself, so closing the server never waits for one). At most {@value #CLUSTER_CALLS} requests
 * wait on the cluster at once (the document's rebuild, actions; each bounded by the admin timeout), so a thread is
 * always left for the page, the cached document and refusals; an action beyond that is answered 503 at once.
 *
 * <p>The document: one request at a time rebuilds it, when the last one is older than {@value #SNAPSHOT_MAX_AGE_MS}
 * ms or an action changed something; requests meanwhile get the last one (a 503 "not ready" before the first). A
 * failed rebuild (503 cluster not answering, 502) is kept as long as a document, so open pages do not repeat it.
 *
 * <p>Every request taken ends with an answer: bad ones with a 4xx and a one-line JSON {@code {"error": ...}}, failures
 * with a 5xx, logged.
 */
public final class DashboardServer implements DashboardFactory.Dashboard {
    private static final Logger log = LoggerFactory.getLogger(DashboardServer.class);
    private static final int THREADS = 4;
    private static final int QUEUED_REQUESTS = 16;
    private static final int CLUSTER_CALLS = THREADS - 1;
    private static final long SNAPSHOT_MAX_AGE_MS = 1_000;
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(15);
    static final String API = "/api/v1/mirrors";
    static final String TASKS_API = "/api/v1/background-tasks";
    private static final String RESOURCES = "/io/twinlog/dashboard/";
    private static final Map<String, String> STATIC = Map.of(
            "/", "index.html", "/index.html", "index.html", "/dashboard.js", "dashboard.js",
            "/dashboard.css", "dashboard.css");
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpListener listener;
    private final boolean actionsEnabled;
    private final DashboardBroker broker;
    private final LagGauges gauges;
    private final DashboardActions actions;
    private final Time time;
    private final HttpServer server;
    private final ThreadPoolExecutor executor;
    /** Permits to wait on the cluster: the document's rebuild and actions. */
    private final Semaphore clusterCalls = new Semaphore(CLUSTER_CALLS);
    /** Set while one request rebuilds the document. */
    private final AtomicBoolean refreshing = new AtomicBoolean();
    /** Bumped by each accepted action: a document built before it is stale. */
    private final AtomicLong changes = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private volatile Snapshot snapshot;

    /** The answer to {@code GET /api/v1/mirrors} as last built: the document, or why it could not be. */
    private record Snapshot(int status, byte[] body, long builtMs, long changes) {
    }

    private DashboardServer(HttpListener listener, boolean actionsEnabled, DashboardBroker broker,
                            MetricsRegistry registry, Time time) throws IOException {
        this.listener = listener;
        this.actionsEnabled = actionsEnabled;
        this.broker = broker;
        this.gauges = new LagGauges(registry);
        this.time = time;
        AtomicInteger count = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUED_REQUESTS), r -> {
                    Thread t = new Thread(r, "twinlog-dashboard-" + broker.brokerId() + "-" + count.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                }, this::onRejected);
        this.server = HttpServer.create(new InetSocketAddress(listener.host(), listener.port()), 50);
        this.actions = new DashboardActions(broker, actionsEnabled,
                new ActionOrigin(listener.host(), server.getAddress().getPort()), this::invalidateSnapshot);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
    }

    /**
     * The queue is full: the dispatcher closes the connection unanswered on this exception (answering would mean
     * reading the request on the dispatcher thread). Logged at the 1st, 2nd, 4th, 8th... refusal.
     */
    private void onRejected(Runnable exchange, ThreadPoolExecutor executor) {
        long n = rejected.incrementAndGet();
        if (Long.bitCount(n) == 1) {
            log.warn("[Dashboard broker={}] {} request(s) refused so far: {} waiting, {} being answered",
                    broker.brokerId(), n, executor.getQueue().size(), executor.getActiveCount());
        }
        throw new RejectedExecutionException("Dashboard busy");
    }

    /** Binds and starts serving. */
    public static DashboardServer start(HttpListener listener, boolean actionsEnabled, DashboardBroker broker,
                                        MetricsRegistry registry, Time time)
            throws IOException {
        DashboardServer s = new DashboardServer(listener, actionsEnabled, broker, registry, time);
        s.server.start();
        log.info("[Dashboard broker={}] serving the mirror dashboard at {} (actions {})", broker.brokerId(), s.url(),
                actionsEnabled ? "enabled" : "disabled: read-only");
        return s;
    }

    /** The page's URL, with the bound port. */
    @Override
    public String url() {
        return listener.url(server.getAddress().getPort(), "/");
    }

    public int boundPort() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getRawPath();
            String method = exchange.getRequestMethod();
            try {
                if (STATIC.containsKey(path)) {
                    requireMethod(method, "GET");
                    serveResource(exchange, STATIC.get(path));
                } else if (path.equals(API)) {
                    requireMethod(method, "GET");
                    Snapshot s = snapshot();
                    sendBytes(exchange, s.status(), "application/json", s.body());
                } else if (path.equals(TASKS_API)) {
                    requireMethod(method, "GET");
                    sendBytes(exchange, 200, "application/json", MAPPER.writeValueAsBytes(
                            BackgroundTasksView.build(broker.brokerId(), broker.backgroundTasks(),
                                    time.milliseconds())));
                } else if (path.startsWith(API + "/")) {
                    requireMethod(method, "POST");
                    if (!clusterCalls.tryAcquire()) {
                        throw new HttpError(503, "Busy: " + CLUSTER_CALLS + " requests to the cluster are in "
                                + "progress; try again in a moment");
                    }
                    try {
                        sendBytes(exchange, 200, "application/json",
                                MAPPER.writeValueAsBytes(actions.act(exchange, path.substring(API.length() + 1))));
                    } finally {
                        clusterCalls.release();
                    }
                } else {
                    throw new HttpError(404, "No such page: " + path);
                }
            } catch (HttpError e) {
                log.debug("[Dashboard broker={}] {} {}: {} {}", broker.brokerId(), method, path, e.status,
                        e.getMessage());
                if (e.status == 401) {
                    exchange.getResponseHeaders().set("WWW-Authenticate",
                            "Basic realm=\"Twinlog cluster\", charset=\"UTF-8\"");
                }
                if (e.status == 405) {
                    exchange.getResponseHeaders().set("Allow", e.allow);
                }
                sendError(exchange, e.status, e.getMessage());
            } catch (RuntimeException e) {
                // broad: every request taken ends with an answer; an unexpected failure is a 500, logged with trace
                log.warn("[Dashboard broker={}] {} {} failed", broker.brokerId(), method, path, e);
                sendError(exchange, 500, "Internal error: " + e);
            }
        }
    }

    private static void requireMethod(String method, String allowed) {
        if (!method.equals(allowed)) {
            throw HttpError.methodNotAllowed(method, allowed);
        }
    }

    private void serveResource(HttpExchange exchange, String name) throws IOException {
        try (InputStream in = DashboardServer.class.getResourceAsStream(RESOURCES + name)) {
            if (in == null) {
                throw new IllegalStateException("Dashboard resource " + name + " missing from the jar");
            }
            String type = name.endsWith(".html") ? "text/html; charset=utf-8"
                    : name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
            sendBytes(exchange, 200, type, in.readAllBytes());
        }
    }

    /**
     * The answer to {@code GET /api/v1/mirrors}: the last one while it is fresh or while another request rebuilds
     * it; else rebuilt here (if a cluster call is free).
     */
    private Snapshot snapshot() {
        Snapshot last = snapshot;
        if (isFresh(last)) {
            return last;
        }
        if (!refreshing.compareAndSet(false, true)) {
            return lastOrNotReady(last);
        }
        try {
            last = snapshot; // another request may have rebuilt it since
            if (isFresh(last)) {
                return last;
            }
            if (!clusterCalls.tryAcquire()) {
                return lastOrNotReady(last);
            }
            try {
                Snapshot built = rebuild();
                snapshot = built;
                return built;
            } finally {
                clusterCalls.release();
            }
        } finally {
            refreshing.set(false);
        }
    }

    private boolean isFresh(Snapshot s) {
        return s != null && s.changes() == changes.get() && time.milliseconds() - s.builtMs() < SNAPSHOT_MAX_AGE_MS;
    }

    private static Snapshot lastOrNotReady(Snapshot last) {
        if (last == null) {
            throw new HttpError(503, "The dashboard is reading this cluster's mirrors: not ready yet, try again in "
                    + "a moment");
        }
        return last;
    }

    /** Builds the document, or the answer saying why it could not; either is kept for the same time. */
    private Snapshot rebuild() {
        long changesBefore = changes.get();
        long startMs = time.milliseconds();
        int status;
        byte[] body;
        try {
            body = MAPPER.writeValueAsBytes(buildDocument(startMs));
            status = 200;
        } catch (HttpError e) {
            log.debug("[Dashboard broker={}] the mirrors document: {} {}", broker.brokerId(), e.status,
                    e.getMessage());
            status = e.status;
            body = errorBody(e.getMessage());
        } catch (IOException | RuntimeException e) {
            // broad: a failed rebuild is kept as a 500 answer like a document, so open pages do not repeat it
            log.warn("[Dashboard broker={}] building the mirrors document failed", broker.brokerId(), e);
            status = 500;
            body = errorBody("Internal error: " + e);
        }
        return new Snapshot(status, body, time.milliseconds(), changesBefore);
    }

    private ObjectNode buildDocument(long nowMs) throws IOException {
        MetadataImage image = broker.image();
        Map<String, Object> configs = broker.localClientConfigs()
                .orElseThrow(() -> new HttpError(503, "This broker has not registered yet"));
        Map<String, MirrorDescription> mirrors;
        try (MirrorAdmin admin = MirrorAdmin.create(withTimeouts(configs))) {
            mirrors = admin.describeClusterMirrors(List.of());
        } catch (MirrorException e) {
            throw new HttpError(502, "DescribeClusterMirrors failed: " + e.getMessage());
        } catch (IOException e) {
            throw new HttpError(503, "This cluster did not answer DescribeClusterMirrors: " + e.getMessage());
        }
        DashboardView.Cluster cluster = DashboardView.cluster(image, broker.brokerId(), broker.clientListener());
        return DashboardView.build(cluster, mirrors, gauges::value,
                new MirrorCommands("bin/twinlog-mirrors.sh", cluster.bootstrapServers()), actionsEnabled, nowMs);
    }

    /** The document is stale after an action: the next poll shows its effect. */
    private void invalidateSnapshot() {
        changes.incrementAndGet();
    }

    /** {@code configs} with the dashboard's client ID and a bound on every admin call. */
    static Map<String, Object> withTimeouts(Map<String, Object> configs) {
        Map<String, Object> out = new HashMap<>(configs);
        out.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis());
        out.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ADMIN_TIMEOUT.toMillis());
        out.put(AdminClientConfig.CLIENT_ID_CONFIG, "twinlog-dashboard");
        return out;
    }

    private static void sendError(HttpExchange exchange, int status, String message) throws IOException {
        sendBytes(exchange, status, "application/json", errorBody(message));
    }

    /** {@code {"error": message}} on one line. */
    private static byte[] errorBody(String message) {
        ObjectNode error = MAPPER.createObjectNode();
        error.put("error", message == null ? "" : message.replace('\n', ' '));
        try {
            return MAPPER.writeValueAsBytes(error);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a one-field object always serializes
        }
    }

    private static void sendBytes(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
