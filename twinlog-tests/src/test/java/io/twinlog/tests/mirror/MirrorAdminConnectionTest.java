package io.twinlog.tests.mirror;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.FaultProxy;
import io.twinlog.testkit.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MirrorAdmin} on Kafka's client networking: which bootstrap broker answers, and the errors when none does.
 * "Dead" brokers are real sockets on loopback: a closed port (refused), a listener that never answers (the kernel
 * accepts the connection), and a {@link FaultProxy} that is cut (accepts, then closes).
 */
@Timeout(90)
class MirrorAdminConnectionTest {
    private static TestCluster destination;
    /** Bound and listening, never accepting or answering: connections are set up, requests time out. */
    private static ServerSocket silent;
    private static int closedPort;

    @BeforeAll
    static void start() throws Exception {
        destination = TestCluster.builder().brokers(1).build().start();
        silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
    }

    @AfterAll
    static void stop() throws IOException {
        if (silent != null) {
            silent.close();
        }
        if (destination != null) {
            destination.close();
        }
    }

    @Test
    void aClosedPortIsUnreachableAtOnce() {
        String closed = "127.0.0.1:" + closedPort;
        long start = System.nanoTime();
        try (MirrorAdmin admin = MirrorAdmin.create(closed, Duration.ofSeconds(20))) {
            MirrorAdmin.UnreachableException e = assertThrows(MirrorAdmin.UnreachableException.class,
                    () -> admin.listClusterMirrors(false));
            assertTrue(e.getMessage().startsWith("Could not connect to any of [" + closed + "]: "), e.getMessage());
        }
        assertTrue(elapsedMs(start) < 10_000, "a refused connection fails the call at once, not at the timeout: "
                + elapsedMs(start) + " ms");
    }

    @Test
    void aBrokerThatNeverAnswersFailsWithinTheTimeout() {
        String quiet = "127.0.0.1:" + silent.getLocalPort();
        long start = System.nanoTime();
        try (MirrorAdmin admin = MirrorAdmin.create(quiet, Duration.ofMillis(1_500))) {
            IOException e = assertThrows(IOException.class, () -> admin.listClusterMirrors(false));
            assertFalse(e instanceof MirrorAdmin.UnreachableException, "the connection was accepted: " + e);
            assertTrue(e.getMessage().startsWith("ListClusterMirrors failed: "), e.getMessage());
            assertTrue(e.getMessage().contains("did not answer ListClusterMirrors within"), e.getMessage());
        }
        long elapsed = elapsedMs(start);
        assertTrue(elapsed >= 1_400 && elapsed < 6_000, "fails at the 1.5 s timeout: " + elapsed + " ms");
    }

    @Test
    void malformedBootstrapServersAreRejectedAtCreate() {
        IllegalArgumentException noPort = assertThrows(IllegalArgumentException.class,
                () -> MirrorAdmin.create("localhost", Duration.ofSeconds(5)));
        assertEquals("Invalid url in bootstrap.servers: localhost", noPort.getMessage());
        IllegalArgumentException badPort = assertThrows(IllegalArgumentException.class,
                () -> MirrorAdmin.create("127.0.0.1:99999", Duration.ofSeconds(5)));
        assertEquals("Invalid port in bootstrap.servers: 127.0.0.1:99999", badPort.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> MirrorAdmin.create(" ", Duration.ofSeconds(5)));
        assertEquals("No bootstrap servers given", none.getMessage());
    }

    @Test
    void deadBootstrapBrokersAmongSeveralAreSkipped() throws Exception {
        try (FaultProxy dropping = new FaultProxy("dropping", "127.0.0.1", closedPort)) {
            dropping.cut();
            String bootstrap = String.join(",", "127.0.0.1:" + closedPort, dropping.address(),
                    "127.0.0.1:" + silent.getLocalPort(), destination.bootstrapServers());
            // one broker's answer within 1 s, the call within 20 s: the silent listener costs a second per round
            Map<String, Object> configs = Map.of("bootstrap.servers", bootstrap, "request.timeout.ms", 1_000,
                    "default.api.timeout.ms", 20_000, "client.id", "connection-test");
            for (int round = 0; round < 4; round++) {
                // a new client each time starts at the first bootstrap server, a dead one
                try (MirrorAdmin admin = MirrorAdmin.create(configs)) {
                    admin.listClusterMirrors(false);
                }
            }
            try (MirrorAdmin admin = MirrorAdmin.create(configs)) {
                for (int call = 0; call < 6; call++) { // one client moves on through the list
                    admin.listClusterMirrors(false);
                }
            }
        }
    }

    @Test
    void aDroppedConnectionIsReplacedByTheNextBootstrapBroker() throws Exception {
        String direct = destination.bootstrapServers();
        int port = Integer.parseInt(direct.substring(direct.lastIndexOf(':') + 1));
        try (FaultProxy proxy = new FaultProxy("to-destination", "127.0.0.1", port);
             MirrorAdmin admin = MirrorAdmin.create(proxy.address() + "," + direct, Duration.ofSeconds(20))) {
            admin.listClusterMirrors(false); // through the proxy, the first bootstrap server
            proxy.cut(); // the open connection drops, and the proxy refuses new ones
            admin.listClusterMirrors(false);
            admin.listClusterMirrors(false);
        }
    }

    private static long elapsedMs(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
