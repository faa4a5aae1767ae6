package io.twinlog.bench;

import kafka.server.BrokerServer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Apache Kafka 4.4.0 with three brokers (IDs 0, 1, 2) and one separate KRaft controller, started with Kafka's
 * {@link KafkaClusterTestKit} (library notes, section 4). Broker settings are Kafka's defaults apart from an
 * explicit {@code broker.session.timeout.ms} (the controller fences a broker whose heartbeats stop for that long;
 * {@code broker.heartbeat.interval.ms} stays at its default of 2000 ms).
 *
 * <p>The test kit has no crash: {@code BrokerServer.shutdown()} is its only way to stop a broker. With
 * {@code controlled.shutdown.enable=true} (the default) that is a controlled shutdown. A cluster built for
 * {@link FailureMode#CRASH} sets {@code controlled.shutdown.enable=false} on every broker: {@code shutdown()} then
 * closes the broker's sockets and stops its heartbeats without telling the controller (Kafka's
 * {@code BrokerLifecycleManager} sends no unregistration), so the controller fences the broker only when its
 * session times out, as after a crash.
 */
final class KafkaReplicatedCluster implements ReplicatedCluster {
    static final int BROKERS = 3;
    static final List<FailureMode> FAILURE_MODES = List.of(FailureMode.CRASH, FailureMode.CONTROLLED);

    private final Path baseDirectory;
    private final int sessionTimeoutMs;
    private final FailureMode plannedFailure;
    private final Map<String, String> overrides;
    private KafkaClusterTestKit cluster;

    /** {@code plannedFailure}: the way {@link #stop} will be called, or null if it will not be. */
    KafkaReplicatedCluster(Path baseDirectory, int sessionTimeoutMs, FailureMode plannedFailure) {
        this(baseDirectory, sessionTimeoutMs, plannedFailure, Map.of());
    }

    /** As above, with broker settings that replace Kafka's defaults ({@code overrides}). */
    KafkaReplicatedCluster(Path baseDirectory, int sessionTimeoutMs, FailureMode plannedFailure,
                           Map<String, String> overrides) {
        if (plannedFailure == FailureMode.ABORT) {
            throw new IllegalArgumentException("Kafka has no equivalent of Twinlog's abort()");
        }
        this.baseDirectory = baseDirectory;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.plannedFailure = plannedFailure;
        this.overrides = Map.copyOf(overrides);
    }

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public void start() throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
                .setCombined(false)
                .setNumBrokerNodes(BROKERS)
                .setNumControllerNodes(1)
                .setBaseDirectory(baseDirectory)
                .build();
        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes)
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp("broker.session.timeout.ms", Integer.toString(sessionTimeoutMs))
                .setConfigProp(BenchTopics.RETENTION_CHECK_INTERVAL_CONFIG, BenchTopics.RETENTION_CHECK_INTERVAL_MS);
        if (plannedFailure == FailureMode.CRASH) {
            builder.setConfigProp("controlled.shutdown.enable", "false");
        }
        overrides.forEach(builder::setConfigProp);
        cluster = builder.build();
        PrintStream stdout = System.out;
        System.setOut(System.err);   // the storage formatter prints to stdout, which carries only the results
        try {
            cluster.format();
        } finally {
            System.setOut(stdout);
        }
        cluster.startup();
        cluster.waitForReadyBrokers();
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public List<Integer> brokerIds() {
        List<Integer> ids = new ArrayList<>(cluster.brokers().keySet());
        ids.sort(null);
        return ids;
    }

    /** The running brokers by ID, for benchmarks that read a broker's own state. */
    Map<Integer, BrokerServer> brokers() {
        return cluster.brokers();
    }

    @Override
    public Optional<Integer> controllerBrokerId() {
        return Optional.empty();    // a separate controller node
    }

    @Override
    public String describe(FailureMode mode) {
        return switch (mode) {
            case CRASH -> "`BrokerServer.shutdown()` with controlled.shutdown.enable=false: fenced after "
                    + "broker.session.timeout.ms=" + sessionTimeoutMs;
            case CONTROLLED -> "`BrokerServer.shutdown()`: controlled shutdown";
            case ABORT -> "n/a";
        };
    }

    @Override
    public void stop(int brokerId, FailureMode mode) {
        if (mode != plannedFailure) {
            throw new IllegalStateException("This cluster was built for " + plannedFailure + ", not " + mode);
        }
        BrokerServer broker = cluster.brokers().get(brokerId);
        if (broker == null) {
            throw new IllegalArgumentException("No broker " + brokerId);
        }
        broker.shutdown();
        broker.awaitShutdown();
    }

    @Override
    public void close() throws Exception {
        if (cluster != null) {
            cluster.close();
            cluster = null;
        }
        TempDirectories.deleteRecursively(baseDirectory);
    }
}
