package io.twinlog.bench;

import io.twinlog.common.BrokerConfig;
import io.twinlog.server.BrokerServer;
import io.twinlog.testkit.TestCertificates;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.utils.Time;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * One Twinlog broker with an embedded ZooKeeper ({@code zookeeper.connect} absent), everything under
 * {@code baseDirectory}. Broker settings are Twinlog's defaults apart from the ones needed to run on loopback and
 * on one broker, and the same group settings as {@link KafkaCluster}: {@code __consumer_offsets} with one replica
 * (consumer groups, e.g. MirrorMaker 2's Connect workers, need it) and no initial rebalance delay.
 */
public final class TwinlogCluster implements ClusterUnderTest {
    /** The SASL/PLAIN user of the SASL_SSL set-up (the broker's own login and the clients'). */
    static final String USER = "bench";
    private static final String PASSWORD = "bench-secret";
    private static final String PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule required";

    private final Path baseDirectory;
    private final boolean saslSsl;
    private final Map<String, String> brokerOverrides;
    private TestCertificates certificates;
    private BrokerServer broker;

    public TwinlogCluster(Path baseDirectory) {
        this(baseDirectory, false);
    }

    /** @param saslSsl serve one SASL_SSL listener (SASL/PLAIN over TLS with a keytool certificate) */
    public TwinlogCluster(Path baseDirectory, boolean saslSsl) {
        this(baseDirectory, saslSsl, Map.of());
    }

    /** @param brokerOverrides broker settings applied last (for example fetch session cache slots) */
    public TwinlogCluster(Path baseDirectory, boolean saslSsl, Map<String, String> brokerOverrides) {
        this.baseDirectory = baseDirectory;
        this.saslSsl = saslSsl;
        this.brokerOverrides = brokerOverrides;
    }

    @Override
    public String name() {
        return "twinlog";
    }

    @Override
    public void start() throws Exception {
        // Kafka's test kit, run earlier in this JVM for SASL, points java.security.auth.login.config at its JAAS
        // file; ZooKeeper's client would then try SASL with a 'Client' section the embedded server does not use
        System.setProperty("zookeeper.sasl.client", "false");
        Properties props = new Properties();
        props.setProperty("broker.id", "0");
        props.setProperty("listeners", (saslSsl ? "SASL_SSL" : "PLAINTEXT") + "://127.0.0.1:0");
        if (saslSsl) {
            Files.createDirectories(baseDirectory);
            certificates = TestCertificates.generate(baseDirectory);
            props.setProperty("inter.broker.listener.name", "SASL_SSL");
            props.setProperty("sasl.enabled.mechanisms", "PLAIN");
            props.setProperty("sasl.mechanism.inter.broker.protocol", "PLAIN");
            props.setProperty("listener.name.sasl_ssl.plain.sasl.jaas.config", PLAIN + " username=\"" + USER
                    + "\" password=\"" + PASSWORD + "\" user_" + USER + "=\"" + PASSWORD + "\";");
            props.setProperty("ssl.keystore.location", certificates.keystore().getPath());
            props.setProperty("ssl.keystore.password", certificates.password());
            props.setProperty("ssl.key.password", certificates.password());
            props.setProperty("ssl.keystore.type", "PKCS12");
            props.setProperty("ssl.truststore.location", certificates.truststore().getPath());
            props.setProperty("ssl.truststore.password", certificates.password());
            props.setProperty("ssl.truststore.type", "PKCS12");
            // as Kafka's test kit does with SASL: the authorizer on, the clients' user a super user
            props.setProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            props.setProperty("super.users", "User:" + USER);
        }
        props.setProperty("log.dirs", baseDirectory.resolve("logs").toString());
        props.setProperty("zookeeper.embedded.port", "0");
        props.setProperty("zookeeper.embedded.data.dir", baseDirectory.resolve("zk").toString());
        props.setProperty("num.partitions", "1");
        props.setProperty("offsets.topic.replication.factor", "1");
        props.setProperty("group.initial.rebalance.delay.ms", "0");
        props.setProperty(BenchTopics.RETENTION_CHECK_INTERVAL_CONFIG, BenchTopics.RETENTION_CHECK_INTERVAL_MS);
        props.putAll(brokerOverrides);
        broker = new BrokerServer(new BrokerConfig(props), Time.SYSTEM);
        broker.start();
    }

    @Override
    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    @Override
    public Map<String, Object> clientSecurity() {
        if (!saslSsl) {
            return Map.of();
        }
        return Map.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL",
                SaslConfigs.SASL_MECHANISM, "PLAIN",
                SaslConfigs.SASL_JAAS_CONFIG, PLAIN + " username=\"" + USER + "\" password=\"" + PASSWORD + "\";",
                SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certificates.truststore().getPath(),
                SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, certificates.password(),
                SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
    }

    @Override
    public void close() {
        if (broker != null) {
            broker.close();
        }
        TempDirectories.deleteRecursively(baseDirectory);
    }
}
