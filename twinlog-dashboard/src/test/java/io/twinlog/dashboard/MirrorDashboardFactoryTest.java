package io.twinlog.dashboard;

import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.HttpListener;
import io.twinlog.server.plugin.DashboardFactory;
import org.apache.kafka.common.utils.MockTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The broker's lookup (twinlog-server's seam) finds this module's dashboard through META-INF/services. */
@Timeout(30)
class MirrorDashboardFactoryTest {

    @Test
    void theBrokersLookupFindsTheDashboardAndItServesThePage() throws Exception {
        DashboardFactory factory = DashboardFactory.load(MirrorDashboardFactoryTest.class.getClassLoader());
        assertInstanceOf(MirrorDashboardFactory.class, factory);
        try (DashboardFactory.Dashboard dashboard = factory.start(new HttpListener("127.0.0.1", 0), false,
                DashboardServerTest.unregistered(), new MetricsRegistry(), new MockTime())) {
            assertTrue(dashboard.url().startsWith("http://127.0.0.1:"), dashboard.url());
            HttpResponse<String> page = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create(dashboard.url())).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, page.statusCode());
            assertTrue(page.body().contains("<html"), page.body());
        }
    }
}
