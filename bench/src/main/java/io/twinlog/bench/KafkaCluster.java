package io.twinlog.bench;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.test.JaasUtils;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * One Apache Kafka 4.4.0 node in KRaft combined mode (broker and controller in one process), started with Kafka's
 * own {@link KafkaClusterTestKit}. Broker settings are Kafka's defaults, plus the replication factor of 1 that
 * internal topics need on a single node.
 */
public final class KafkaCluster implements ClusterUnderTest {
    private final Path baseDirectory;
    private final boolean saslSsl;
    private final Map<String, String> brokerOverrides;
    private KafkaClusterTestKit cluster;

    public KafkaCluster(Path baseDirectory) {
        this(baseDirectory, false);
    }

    /**
     * @param saslSsl the broker listener is SASL_SSL, set up by Kafka's test kit itself: SASL/PLAIN with its JAAS
     *                users, TLS with the certificate its {@code SslManager} generates (the controller listener stays
     *                PLAINTEXT; clients never use it)
     */
    public KafkaCluster(Path baseDirectory, boolean saslSsl) {
        this(baseDirectory, saslSsl, Map.of());
    }

    /** @param brokerOverrides broker settings applied last (for example fetch session cache slots) */
    public KafkaCluster(Path baseDirectory, boolean saslSsl, Map<String, String> brokerOverrides) {
        this.baseDirectory = baseDirectory;
        this.saslSsl = saslSsl;
        this.brokerOverrides = brokerOverrides;
    }

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public void start() throws Exception {
        TestKitNodes nodes = new TestKitNodes.Builder()
                .setCombined(true)
                .setNumBrokerNodes(1)
                .setNumControllerNodes(1)
                .setBaseDirectory(baseDirectory)
                .setBrokerSecurityProtocol(saslSsl ? SecurityProtocol.SASL_SSL : SecurityProtocol.PLAINTEXT)
                .build();
        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes)
                .setConfigProp("num.partitions", "1")
                .setConfigProp("offsets.topic.replication.factor", "1")
                .setConfigProp("transaction.state.log.replication.factor", "1")
                .setConfigProp("transaction.state.log.min.isr", "1")
                .setConfigProp("group.initial.rebalance.delay.ms", "0")
                .setConfigProp(BenchTopics.RETENTION_CHECK_INTERVAL_CONFIG, BenchTopics.RETENTION_CHECK_INTERVAL_MS)
                // with SASL the kit turns on StandardAuthorizer with its admin as super user; the controller
                // listener stays PLAINTEXT, so the broker registering there (ANONYMOUS) must be one too
                .setConfigProp("super.users", "User:" + JaasUtils.KAFKA_PLAIN_ADMIN + ";User:ANONYMOUS");
        brokerOverrides.forEach(builder::setConfigProp);
        cluster = builder.build();
        formatQuietly(cluster);
        cluster.startup();
        cluster.waitForReadyBrokers();
    }

    /** Kafka's storage formatter prints to System.out; send that to stderr so stdout holds only the results. */
    private static void formatQuietly(KafkaClusterTestKit cluster) throws Exception {
        PrintStream stdout = System.out;
        System.setOut(System.err);
        try {
            cluster.format();
        } finally {
            System.setOut(stdout);
        }
    }

    @Override
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    @Override
    public Map<String, Object> clientSecurity() {
        if (!saslSsl) {
            return Map.of();
        }
        Map<String, Object> security = new HashMap<>(cluster.sslManager().createClientSslConfig());
        security.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        security.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        security.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule "
                + "required username=\"" + JaasUtils.KAFKA_PLAIN_ADMIN + "\" password=\""
                + JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD + "\";");
        return security;
    }

    @Override
    public void close() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        TempDirectories.deleteRecursively(baseDirectory);
    }
}
