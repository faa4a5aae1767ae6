package io.twinlog.common;

import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class HttpListenerTest {

    @Test
    void parsesAHostAndPort() {
        HttpListener listener = HttpListener.parse("dashboard.listener", " http://127.0.0.1:8080 ");
        assertEquals(new HttpListener("127.0.0.1", 8080), listener);
        assertEquals("http://127.0.0.1:8080/", listener.url(8080, "/"));
    }

    @Test
    void holdsAnIpv6AddressWithoutItsBracketsAndPrintsThemOnce() {
        HttpListener listener = HttpListener.parse("dashboard.listener", "http://[::1]:0");
        assertEquals("::1", listener.host());
        assertEquals("http://[::1]:43210/", listener.url(43210, "/"));
    }

    @Test
    void theUrlOfAPortZeroListenerHasTheBoundPort() {
        assertEquals("http://localhost:9404/metrics",
                HttpListener.parse("metrics.prometheus.listener", "http://localhost:0").url(9404, "/metrics"));
    }

    @Test
    void refusesWhatIsNotHttpHostPort() {
        assertThrows(ConfigException.class, () -> HttpListener.parse("dashboard.listener", "https://127.0.0.1:8080"));
        assertThrows(ConfigException.class, () -> HttpListener.parse("dashboard.listener", "http://127.0.0.1"));
        assertThrows(ConfigException.class, () -> HttpListener.parse("dashboard.listener", "127.0.0.1:8080"));
        assertThrows(ConfigException.class, () -> HttpListener.parse("dashboard.listener", "http://[::1:8080"));
    }
}
