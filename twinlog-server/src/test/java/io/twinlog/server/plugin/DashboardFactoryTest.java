package io.twinlog.server.plugin;

import io.twinlog.common.BrokerConfig;
import io.twinlog.server.BrokerServer;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** twinlog-server's tests run without twinlog-dashboard on the class path, as a broker without the jar would. */
@Timeout(30)
class DashboardFactoryTest {
    private static final String MESSAGE = "dashboard.listener is set but the mirror dashboard is not on the class "
            + "path: add the twinlog-dashboard jar (libs/ of the release tarball holds it), or remove dashboard.listener";

    @Test
    void withoutTheDashboardModuleTheLookupFailsInOneLine() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> DashboardFactory.load(DashboardFactoryTest.class.getClassLoader()));
        assertEquals(MESSAGE, e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void aBrokerWithTheDashboardConfiguredButAbsentRefusesBeforeTouchingAnything(@TempDir Path dir) throws Exception {
        Path logs = dir.resolve("logs");
        // port 1 of loopback: nothing answers there, so a start that went as far as ZooKeeper would fail otherwise
        BrokerServer broker = new BrokerServer(new BrokerConfig(Map.of(BrokerConfig.BROKER_ID, "1",
                BrokerConfig.LOG_DIRS, logs.toString(), BrokerConfig.ZOOKEEPER_CONNECT, "127.0.0.1:1",
                BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
                BrokerConfig.DASHBOARD_LISTENER, "http://127.0.0.1:0")), Time.SYSTEM);
        try {
            ConfigException e = assertThrows(ConfigException.class, broker::start);
            assertEquals(MESSAGE, e.getMessage());
            assertFalse(Files.exists(logs), "no log dir created");
            assertTrue(broker.dashboardUrl().isEmpty());
        } finally {
            broker.close();
        }
    }
}
