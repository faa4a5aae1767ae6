package io.twinlog.server.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.HttpListener;
import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard's HTTP shell without a cluster: its page and assets come from the jar, and every bad request gets a
 * 4xx with a one-line JSON error while the server goes on serving.
 */
@Timeout(30)
class DashboardServerTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final HttpClient http = HttpClient.newHttpClient();
    private DashboardServer readOnly;
    private DashboardServer withActions;

    /** A broker that has not registered yet: no client configs. */
    private static DashboardServer.Broker unregistered() {
        return new DashboardServer.Broker() {
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
                return Optional.empty();
            }

            @Override
            public boolean authorizerEnabled() {
                return false;
            }
        };
    }

    @BeforeEach
    void start() throws Exception {
        HttpListener any = new HttpListener("127.0.0.1", 0);
        readOnly = DashboardServer.start(any, false, unregistered(), new MetricsRegistry(), Time.SYSTEM);
        withActions = DashboardServer.start(any, true, unregistered(), new MetricsRegistry(), Time.SYSTEM);
    }

    @AfterEach
    void stop() {
        readOnly.close();
        withActions.close();
    }

    private HttpResponse<String> send(DashboardServer server, String method, String path, String contentType)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url()).resolve(path));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{}")
                : HttpRequest.BodyPublishers.noBody());
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
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
    void aBrokerNotRegisteredYetAnswers503() throws Exception {
        assertError(send(readOnly, "GET", "/api/v1/mirrors", null), 503, "not registered yet");
    }
}
