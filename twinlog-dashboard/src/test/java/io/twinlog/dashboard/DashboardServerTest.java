package io.twinlog.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.HttpListener;
import io.twinlog.common.tasks.TaskHealth;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.server.plugin.DashboardBroker;
import org.apache.kafka.common.utils.MockTime;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard's HTTP shell without a cluster: its page and assets come from the jar, and every bad request gets a
 * 4xx with a one-line JSON error while the server goes on serving; one request at a time reads the cluster, the
 * others are answered at once, and a failed read is kept like a document.
 */
@Timeout(30)
class DashboardServerTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final long SNAPSHOT_MAX_AGE_MS = 1_000;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<DashboardServer> servers = new ArrayList<>();
    private DashboardServer readOnly;
    private DashboardServer withActions;

    /** A broker that has not registered yet: no client configs (MirrorDashboardFactoryTest uses it too). */
    static DashboardBroker unregistered() {
        return unregistered(Optional::empty);
    }

    /** A broker that has not registered yet, whose {@code localClientConfigs} answers with {@code configs}. */
    private static DashboardBroker unregistered(Supplier<Optional<Map<String, Object>>> configs) {
        return unregistered(configs, List.of());
    }

    /** ... and whose background tasks are {@code tasks}. */
    private static DashboardBroker unregistered(Supplier<Optional<Map<String, Object>>> configs,
                                                List<TaskHealth> tasks) {
        return new DashboardBroker() {
            @Override
            public int brokerId() {
                return 7;
            }

            @Override
            public MetadataImage image() {
                return MetadataImage.EMPTY;
            }

            @Override
            public String clientListener() {
                return "PLAINTEXT";
            }

            @Override
            public Optional<Map<String, Object>> localClientConfigs() {
                return configs.get();
            }

            @Override
            public boolean authorizerEnabled() {
                return false;
            }

            @Override
            public List<TaskHealth> backgroundTasks() {
                return tasks;
            }
        };
    }

    @BeforeEach
    void start() throws Exception {
        readOnly = start(false, unregistered(), Time.SYSTEM);
        withActions = start(true, unregistered(), Time.SYSTEM);
    }

    private DashboardServer start(boolean actions, DashboardBroker broker, Time time) throws Exception {
        DashboardServer server = DashboardServer.start(new HttpListener("127.0.0.1", 0), actions, broker,
                new MetricsRegistry(), time);
        servers.add(server);
        return server;
    }

    @AfterEach
    void stop() {
        servers.forEach(DashboardServer::close);
    }

    private HttpResponse<String> send(DashboardServer server, String method, String path, String contentType)
            throws Exception {
        return http.send(request(server, method, path, contentType), HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> sendAsync(DashboardServer server, String method, String path,
                                                              String contentType) {
        return http.sendAsync(request(server, method, path, contentType), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(DashboardServer server, String method, String path, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url()).resolve(path));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{}")
                : HttpRequest.BodyPublishers.noBody());
        return b.build();
    }

    private void assertError(HttpResponse<String> response, int status, String fragment) throws Exception {
        assertEquals(status, response.statusCode(), response.body());
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
        assertTrue(!response.body().contains("\n"), "one line: " + response.body());
        JsonNode error = MAPPER.readTree(response.body());
        assertTrue(error.get("error").asText().contains(fragment), response.body());
    }

    @Test
    void servesThePageAndItsAssetsFromTheJar() throws Exception {
        HttpResponse<String> page = send(readOnly, "GET", "/", null);
        assertEquals(200, page.statusCode());
        assertTrue(page.body().contains("<script src=\"dashboard.js\">"), page.body());
        assertEquals(200, send(readOnly, "GET", "/dashboard.js", null).statusCode());
        assertEquals(200, send(readOnly, "GET", "/dashboard.css", null).statusCode());
    }

    @Test
    void servesTheBackgroundTasksFromMemoryBeforeTheBrokerRegistered() throws Exception {
        DashboardServer server = start(false, unregistered(Optional::empty,
                List.of(new TaskHealth("metadata-resync", 2_000, 7_000, true, 3, 3, "boom"))), Time.SYSTEM);
        // the mirrors document needs the cluster; the tasks do not
        assertEquals(503, send(server, "GET", "/api/v1/mirrors", null).statusCode());
        HttpResponse<String> tasks = send(server, "GET", "/api/v1/background-tasks", null);
        assertEquals(200, tasks.statusCode());
        JsonNode doc = MAPPER.readTree(tasks.body());
        assertEquals("FAILING", doc.get("tasks").get(0).get("status").asText());
        assertEquals("metadata-resync", doc.get("attention").get(0).asText());
        assertError(send(server, "POST", "/api/v1/background-tasks", "application/json"), 405, "use GET");
    }

    @Test
    void badRequestsGetA4xxWithAOneLineJsonError() throws Exception {
        assertError(send(readOnly, "GET", "/nothing-here", null), 404, "No such page");
        assertError(send(readOnly, "DELETE", "/api/v1/mirrors", null), 405, "use GET");
        assertError(send(readOnly, "GET", "/api/v1/mirrors/dr/topics/orders/failover", null), 405, "use POST");
        assertError(send(readOnly, "POST", "/api/v1/mirrors/dr/topics/orders/failover", "application/json"), 403,
                "dashboard.actions.enable=false");
        assertError(send(withActions, "POST", "/api/v1/mirrors/dr/topics/orders/explode", "application/json"), 404,
                "Unknown action");
        assertError(send(withActions, "POST", "/api/v1/mirrors/dr/orders", "application/json"), 404, "Expected POST");
        assertError(send(withActions, "POST", "/api/v1/mirrors/dr/topics/orders/failover", "text/plain"), 415,
                "application/json");
        // still serving after all of them
        assertEquals(200, send(readOnly, "GET", "/", null).statusCode());
    }

    @Test
    void anActionAddressedToAnotherHostOrFromAnotherPageIsRefused() throws Exception {
        String failover = "/api/v1/mirrors/dr/topics/orders/failover";
        int port = withActions.boundPort();
        String rebinding = rawPost(withActions, failover, "attacker.example:" + port, null);
        assertTrue(rebinding.startsWith("HTTP/1.1 403 "), rebinding);
        assertTrue(rebinding.contains("{\"error\":\"Refused: Host 'attacker.example:" + port + "'"), rebinding);
        String crossSite = rawPost(withActions, failover, "127.0.0.1:" + port, "http://attacker.example");
        assertTrue(crossSite.startsWith("HTTP/1.1 403 "), crossSite);
        assertTrue(crossSite.contains("comes from the page of http://attacker.example"), crossSite);
        // the dashboard's own page, by another spelling of loopback, gets past the check (to the unregistered broker)
        String own = rawPost(withActions, failover, "localhost:" + port, "http://localhost:" + port);
        assertTrue(own.startsWith("HTTP/1.1 503 "), own);
    }

    /** A POST with the given {@code Host} and {@code Origin} (which java.net.http does not let a caller set). */
    private static String rawPost(DashboardServer server, String path, String host, String origin) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", server.boundPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\n"
                    + (origin == null ? "" : "Origin: " + origin + "\r\n")
                    + "Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aBrokerNotRegisteredYetAnswers503() throws Exception {
        assertError(send(readOnly, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
    }

    @Test
    void aFailedReadOfTheClusterIsKeptAsLongAsADocument() throws Exception {
        MockTime time = new MockTime();
        GatedBroker broker = new GatedBroker();
        broker.open();
        DashboardServer server = start(false, broker.broker(), time);

        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
        time.sleep(SNAPSHOT_MAX_AGE_MS - 1);
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
        assertEquals(1, broker.reads(), "the failure is answered again without asking the broker");

        time.sleep(1);
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
        assertEquals(2, broker.reads(), "read again once as old as a document may be");
    }

    @Test
    void whileOneRequestReadsTheClusterTheOthersAreAnsweredAtOnce() throws Exception {
        MockTime time = new MockTime();
        GatedBroker broker = new GatedBroker();
        DashboardServer server = start(false, broker.broker(), time);

        // nothing read yet: the reader waits on the cluster, another poll is told the page is not ready
        CompletableFuture<HttpResponse<String>> first = sendAsync(server, "GET", "/api/v1/mirrors", null);
        broker.awaitWaiting(1);
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not ready yet");
        assertEquals(200, send(server, "GET", "/", null).statusCode(), "the page is served meanwhile");
        broker.open();
        assertError(first.get(10, TimeUnit.SECONDS), 503, "not registered yet");
        assertEquals(1, broker.reads());

        // stale: one request reads again, the others get the last answer without waiting for it
        broker.close();
        time.sleep(SNAPSHOT_MAX_AGE_MS);
        CompletableFuture<HttpResponse<String>> rereading = sendAsync(server, "GET", "/api/v1/mirrors", null);
        broker.awaitWaiting(1);
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
        assertEquals(2, broker.reads(), "only the one rebuilding asked the broker");
        broker.open();
        assertError(rereading.get(10, TimeUnit.SECONDS), 503, "not registered yet");
    }

    @Test
    void requestsBeyondTheClusterCallsAreRefusedAndClosingDoesNotWaitForThem() throws Exception {
        GatedBroker broker = new GatedBroker();
        DashboardServer server = start(true, broker.broker(), Time.SYSTEM);
        String failover = "/api/v1/mirrors/dr/topics/orders/failover";
        // three requests wait on the cluster: the document's rebuild and two actions
        sendAsync(server, "GET", "/api/v1/mirrors", null);
        sendAsync(server, "POST", failover, "application/json");
        sendAsync(server, "POST", failover, "application/json");
        broker.awaitWaiting(3);

        assertError(send(server, "POST", failover, "application/json"), 503, "Busy");
        assertError(send(server, "GET", "/api/v1/mirrors", null), 503, "not ready yet");
        assertEquals(200, send(server, "GET", "/dashboard.js", null).statusCode(), "a thread is left for the rest");
        assertTimeoutPreemptively(Duration.ofSeconds(5), server::close,
                "closing does not wait for the requests waiting on the cluster");
    }

    /**
     * An unregistered broker whose reads of its client configs (where the dashboard would then call the cluster)
     * wait while the gate is closed: a cluster that is slow to answer.
     */
    private static final class GatedBroker {
        private final AtomicInteger reads = new AtomicInteger();
        private final Semaphore waiting = new Semaphore(0);
        private volatile CountDownLatch gate = new CountDownLatch(1);

        DashboardBroker broker() {
            return unregistered(() -> {
                reads.incrementAndGet();
                waiting.release();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the cluster was slow", e);
                }
                return Optional.empty();
            });
        }

        void open() {
            gate.countDown();
        }

        void close() {
            gate = new CountDownLatch(1);
        }

        int reads() {
            return reads.get();
        }

        void awaitWaiting(int requests) throws InterruptedException {
            assertTrue(waiting.tryAcquire(requests, 10, TimeUnit.SECONDS),
                    requests + " request(s) waiting on the cluster; " + waiting.availablePermits() + " are");
        }
    }
}
