package io.twinlog.tests.security;

import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCertificates;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror between two clusters that serve only SASL_SSL (issue 13, points 5 and 8, before ACLs): every client —
 * the test's, the mirror's fetcher, admin and group offset sync towards the source, the failback's last mirrored
 * epoch lookup, and each broker's own clients of its cluster (the quarantine's producer, the offset sync's writes)
 * — authenticates over TLS; the mirror logs in to the source as a SCRAM-SHA-512 user created with the Admin API.
 * The full cycle: mirror, group offsets synced, failover, failback cutting only what the peer never had.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SecuredMirrorTest {
    private static final String TOPIC = "payments";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final String BROKER_PASSWORD = "broker-secret";
    private static final String MIRROR_PASSWORD = "mirror-secret";

    @TempDir
    static Path certificates;

    @Test
    void mirrorFailoverAndFailbackBetweenSaslSslClusters() throws Exception {
        TestCertificates certs = TestCertificates.generate(certificates);
        try (TestCluster a = secured(certs).start();
             TestCluster b = secured(certs).start();
             Admin aAdmin = a.admin();
             Admin bAdmin = b.admin();
             MirrorAdmin onA = MirrorAdmin.create(mirrorAdminConfigs(a));
             MirrorAdmin onB = MirrorAdmin.create(mirrorAdminConfigs(b))) {
            for (Admin admin : List.of(aAdmin, bAdmin)) {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("mirror",
                        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), MIRROR_PASSWORD))).all().get();
            }
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(a, "a", 100);
            aAdmin.alterConsumerGroupOffsets("billing", Map.of(TP, new OffsetAndMetadata(60))).all().get();

            Map<String, String> fromA = source(a, certs);
            fromA.put("mirror.groups.include", "billing");
            fromA.put("mirror.groups.sync.interval.ms", "300");
            onB.createClusterMirror("from-a", fromA);
            assertEquals(Map.of(), onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("B mirrors A's 100 records over SASL_SSL", () -> bAdmin.listOffsets(Map.of(TP,
                    OffsetSpec.latest())).all().get().get(TP).offset() == 100,
                    Duration.ofSeconds(60));
            Waits.waitUntil("billing's offset synced to B", () -> {
                OffsetAndMetadata o = bAdmin.listConsumerGroupOffsets("billing").partitionsToOffsetAndMetadata()
                        .get().get(TP);
                return o != null && o.offset() == 60;
            }, Duration.ofSeconds(60));

            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(b, "b", 10);
            produce(a, "lost", 5);

            onA.createClusterMirror("from-b", source(b, certs));
            assertEquals(Map.of(), onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()));
            MirrorInvariants.awaitMirrored(b, a, TP);
            MirrorAdmin.PartitionDescription back = onA.describeClusterMirrors(List.of("from-b")).get("from-b")
                    .topics().get(TOPIC).partitions().get(0);
            assertEquals(5, back.truncatedOffsets(), "the last mirrored epoch lookup over SASL_SSL found offset 100: "
                    + "only A's 5 own records were cut (a lookup that failed would have cut all 105)");
            assertTrue(back.state().equals("MIRRORING"), back.toString());
        }
    }

    /** One broker serving only SASL_SSL; brokers log in with PLAIN, users may use SCRAM-SHA-512. */
    private static TestCluster secured(TestCertificates certs) {
        TestCluster.Builder builder = TestCluster.builder().brokers(1)
                .brokerProperty("listeners", "SASL_SSL://127.0.0.1:0")
                .brokerProperty("inter.broker.listener.name", "SASL_SSL")
                .brokerProperty("sasl.mechanism.inter.broker.protocol", "PLAIN")
                .brokerProperty("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512")
                .brokerProperty("ssl.keystore.location", certs.keystore().getPath())
                .brokerProperty("ssl.keystore.password", certs.password())
                .brokerProperty("ssl.key.password", certs.password())
                .brokerProperty("ssl.keystore.type", "PKCS12")
                .brokerProperty("ssl.truststore.location", certs.truststore().getPath())
                .brokerProperty("ssl.truststore.password", certs.password())
                .brokerProperty("ssl.truststore.type", "PKCS12")
                .brokerProperty("listener.name.sasl_ssl.plain.sasl.jaas.config",
                        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"broker\" "
                                + "password=\"" + BROKER_PASSWORD + "\" user_broker=\"" + BROKER_PASSWORD + "\";")
                .brokerProperty("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;");
        tls(certs).forEach(builder::clientProperty);
        builder.clientProperty(SaslConfigs.SASL_MECHANISM, "PLAIN");
        builder.clientProperty(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule "
                + "required username=\"broker\" password=\"" + BROKER_PASSWORD + "\";");
        return builder.build();
    }

    private static Map<String, Object> tls(TestCertificates certs) {
        Map<String, Object> cfg = new HashMap<>();
        cfg.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL");
        cfg.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, certs.truststore().getPath());
        cfg.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, certs.password());
        cfg.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
        return cfg;
    }

    /** A mirror's source configs: the SCRAM user "mirror" over SASL_SSL, as an operator writes them. */
    private static Map<String, String> source(TestCluster cluster, TestCertificates certs) {
        Map<String, String> cfg = new HashMap<>();
        cfg.put("bootstrap.servers", cluster.bootstrapServers());
        tls(certs).forEach((k, v) -> cfg.put(k, String.valueOf(v)));
        cfg.put(SaslConfigs.SASL_MECHANISM, "SCRAM-SHA-512");
        cfg.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"mirror\" password=\"" + MIRROR_PASSWORD + "\";");
        return cfg;
    }

    private static Map<String, Object> mirrorAdminConfigs(TestCluster cluster) {
        Map<String, Object> cfg = new HashMap<>(cluster.clientProperties());
        cfg.put("bootstrap.servers", cluster.bootstrapServers());
        return cfg;
    }

    private static void produce(TestCluster cluster, String prefix, int count) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = cluster.producer(Map.of("acks", "all"))) {
            for (int i = 0; i < count; i++) {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            p.flush();
        }
    }
}
