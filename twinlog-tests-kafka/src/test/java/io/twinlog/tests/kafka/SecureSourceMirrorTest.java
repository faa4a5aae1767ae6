package io.twinlog.tests.kafka;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.ReplicaLogs;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.JaasUtils;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A source that only accepts SASL_PLAINTEXT (Apache Kafka 4.4, PLAIN mechanism): the mirror's source client configs
 * carry the credentials, the fetcher authenticates with them, wrong credentials fail the partitions with the
 * authentication error as the reason, and an --alter with the right ones resumes mirroring where it stopped.
 */
@Timeout(300)
class SecureSourceMirrorTest {
    private static final String TOPIC = "ledger";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @Test
    void mirrorsFromASaslSourceAndReportsBadCredentials() throws Exception {
        try (KafkaClusterTestKit kafka = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1)
                .setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
                .setControllerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT).build())
                .setConfigProp("offsets.topic.replication.factor", "1").build()) {
            kafka.format();
            kafka.startup();
            kafka.waitForReadyBrokers();
            Map<String, String> good = sasl(kafka.bootstrapServers(), JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD);
            try (Admin admin = Admin.create(new HashMap<>(good))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            }
            produce(good, 200, "before");

            try (TestCluster twinlog = TestCluster.builder().brokers(1).build().start();
                 MirrorAdmin mirrors = MirrorAdmin.create(twinlog.bootstrapServers(), Duration.ofSeconds(60))) {
                Map<String, String> bogus = new HashMap<>(good);
                bogus.put("security.protocol", "CARRIER_PIGEON");
                MirrorException invalid = assertThrows(MirrorException.class,
                        () -> mirrors.createClusterMirror("secure", bogus));
                assertEquals(Errors.INVALID_CONFIG.code(), invalid.errorCode());

                mirrors.createClusterMirror("secure", good);
                MirrorAdmin.MirrorDescription described = mirrors.describeClusterMirrors(List.of("secure")).get("secure");
                assertTrue(described.sensitiveConfigs().contains("sasl.jaas.config"), described.toString());
                assertTrue(!described.toString().contains(JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD), "credentials echoed");
                assertEquals(Map.of(), mirrors.startMirrorTopics("secure", List.of(TOPIC), List.of(), List.of()));
                Waits.waitUntil("200 records mirrored over SASL", () -> end(twinlog) == 200);

                // the source rotates the password out from under us: the partition fails with why, and retries
                mirrors.alterClusterMirror("secure", Map.of("sasl.jaas.config", jaas("wrong-password")));
                MirrorAdmin.PartitionDescription failed = Waits.waitFor("FAILED with the authentication error",
                        () -> partition(mirrors), d -> d.state().equals("FAILED"), Duration.ofSeconds(60));
                assertTrue(failed.lastError().contains("Authentication") && failed.retryAttempt() > 0,
                        failed.lastError());
                produce(good, 100, "after");

                mirrors.alterClusterMirror("secure", Map.of("sasl.jaas.config",
                        jaas(JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD)));
                Waits.waitUntil("mirroring resumed with the fixed credentials and caught up",
                        () -> partition(mirrors).state().equals("MIRRORING") && end(twinlog) == 300);
                List<ReplicaLogs.Batch> local = ReplicaLogs.read(twinlog.broker(0), TP);
                assertEquals(300, local.get(local.size() - 1).lastOffset() + 1);
            }
        }
    }

    private static Map<String, String> sasl(String bootstrap, String password) {
        return Map.of("bootstrap.servers", bootstrap, "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "PLAIN", "sasl.jaas.config", jaas(password));
    }

    private static String jaas(String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                + JaasUtils.KAFKA_PLAIN_ADMIN + "\" password=\"" + password + "\";";
    }

    private static void produce(Map<String, String> configs, int count, String prefix) throws Exception {
        Map<String, Object> props = new HashMap<>(configs);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props)) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }

    private static long end(TestCluster twinlog) {
        return twinlog.broker(0).logStore().log(TP).map(l -> l.logEndOffset()).orElse(-1L);
    }

    private static MirrorAdmin.PartitionDescription partition(MirrorAdmin mirrors) throws Exception {
        return mirrors.describeClusterMirrors(List.of("secure")).get("secure").topics().get(TOPIC).partitions().get(0);
    }
}
