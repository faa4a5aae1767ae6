package io.twinlog.tests.security;

import io.twinlog.cli.MirrorsCommand;
import io.twinlog.clients.mirror.MirrorAcl;
import io.twinlog.clients.mirror.MirrorAdmin;
import io.twinlog.clients.mirror.MirrorErrors;
import io.twinlog.clients.mirror.MirrorException;
import io.twinlog.testkit.MirrorInvariants;
import io.twinlog.testkit.MirrorSteps;
import io.twinlog.testkit.TestCertificates;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
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
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror between two clusters that serve only SASL_SSL and enforce ACLs with Kafka's StandardAuthorizer (issue 13,
 * points 5 and 8): every client — the test's, the mirror's fetcher, admin and group offset sync towards the source,
 * the failback's last mirrored epoch lookup, and each broker's own clients of its cluster (the quarantine's producer,
 * the offset sync's writes) — authenticates over TLS. The principals hold the least privileges docs/security.md
 * lists, and nothing more: the mirror logs in to its source as the SCRAM-SHA-512 user {@code mirror}, the operator
 * runs the mirror commands as {@code operator}; only the brokers are super users. The full cycle: mirror, group
 * offsets synced, failover, failback cutting only what the peer never had.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SecuredMirrorTest {
    private static final String TOPIC = "payments";
    private static final String GROUP = "billing";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final String BROKER_PASSWORD = "broker-secret";
    private static final String MIRROR_PASSWORD = "mirror-secret";
    private static final String OPERATOR_PASSWORD = "operator-secret";

    @TempDir
    static Path certificates;

    @Test
    void mirrorFailoverAndFailbackBetweenSaslSslClusters() throws Exception {
        TestCertificates certs = TestCertificates.generate(certificates);
        try (TestCluster a = secured(certs).start();
             TestCluster b = secured(certs).start();
             Admin aAdmin = a.admin();
             Admin bAdmin = b.admin();
             MirrorAdmin superOnA = MirrorAdmin.create(mirrorAdminConfigs(a, "broker", BROKER_PASSWORD, "PLAIN"));
             MirrorAdmin superOnB = MirrorAdmin.create(mirrorAdminConfigs(b, "broker", BROKER_PASSWORD, "PLAIN"));
             MirrorAdmin onA = MirrorAdmin.create(mirrorAdminConfigs(a, "operator", OPERATOR_PASSWORD,
                     "SCRAM-SHA-512"));
             MirrorAdmin onB = MirrorAdmin.create(mirrorAdminConfigs(b, "operator", OPERATOR_PASSWORD,
                     "SCRAM-SHA-512"))) {
            for (Admin admin : List.of(aAdmin, bAdmin)) {
                admin.alterUserScramCredentials(List.of(
                        new UserScramCredentialUpsertion("mirror", new ScramCredentialInfo(
                                ScramMechanism.SCRAM_SHA_512, 4096), MIRROR_PASSWORD),
                        new UserScramCredentialUpsertion("operator", new ScramCredentialInfo(
                                ScramMechanism.SCRAM_SHA_512, 4096), OPERATOR_PASSWORD))).all().get();
            }
            // the least privileges of docs/security.md: B's mirror from-a reads A, then A's mirror from-b reads B
            grantLeastPrivileges(aAdmin, superOnA, "from-b");
            grantLeastPrivileges(bAdmin, superOnB, "from-a");
            aAdmin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
            produce(a, "a", 100);
            aAdmin.alterConsumerGroupOffsets(GROUP, Map.of(TP, new OffsetAndMetadata(60))).all().get();

            Map<String, String> fromA = source(a, certs);
            fromA.put("mirror.groups.include", GROUP);
            fromA.put("mirror.metadata.refresh.interval.ms", "300");
            fromA.put("mirror.groups.sync.interval.ms", "300");
            Waits.waitUntil("the operator's ACLs applied on B", () -> createdAs(onB, "from-a", fromA));
            // ACL sync creates ACLs with the broker's rights: setting it needs ALTER on the cluster, as creating ACLs
            Map<String, String> aclSync = Map.of("mirror.acls.include", "Topic;" + TOPIC + ";*;*;User:app");
            MirrorException refused = assertThrows(MirrorException.class,
                    () -> onB.alterClusterMirror("from-a", aclSync));
            assertEquals(Errors.CLUSTER_AUTHORIZATION_FAILED.code(), refused.errorCode(), refused.toString());
            superOnB.alterClusterMirror("from-a", aclSync);
            // point 6: the mirror's source password is encrypted in ZooKeeper (password.encoder.secret)
            try (CuratorFramework zk = CuratorFrameworkFactory.newClient(b.zookeeperConnect(),
                    new RetryOneTime(100))) {
                zk.start();
                String stored = new String(zk.getData().forPath("/mirrors/from-a"), StandardCharsets.UTF_8);
                assertTrue(stored.contains("encryptedConfigs") && !stored.contains(MIRROR_PASSWORD), stored);
            }
            assertEquals(Map.of(), onB.startMirrorTopics("from-a", List.of(TOPIC), List.of(), List.of()));
            Waits.waitUntil("B mirrors A's 100 records over SASL_SSL", () -> bAdmin.listOffsets(Map.of(TP,
                    OffsetSpec.latest())).all().get().get(TP).offset() == 100,
                    Duration.ofSeconds(60));
            Waits.waitUntil("billing's offset synced to B", () -> {
                OffsetAndMetadata o = bAdmin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata()
                        .get().get(TP);
                return o != null && o.offset() == 60;
            }, Duration.ofSeconds(60));

            syncsSelectedAclsAndNeverDeletes(aAdmin, bAdmin);

            MirrorSteps.failOver(onB, "from-a", TOPIC);
            produce(b, "b", 10);
            produce(a, "lost", 5);

            // an authorization failure: B no longer lets the mirror principal describe from-a, so A cannot learn
            // whether B's payments still mirrors from A: the failback, which would take A's payments over, is refused
            // (decision 125), naming the missing right, and A's payments stays A's, untouched
            assertEquals(1, superOnB.deleteMirrorAcls("from-a", PatternType.LITERAL, "User:mirror", null,
                    AclOperation.DESCRIBE, AclPermissionType.ALLOW).size());
            Waits.waitUntil("the operator's ACLs applied on A", () -> createdAs(onA, "from-b", source(b, certs)));
            MirrorException inDoubt = onA.startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of())
                    .get(TOPIC);
            assertEquals(MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED, inDoubt.mirrorError().orElseThrow(),
                    inDoubt.getMessage());
            assertTrue(inDoubt.getMessage().contains("needs DESCRIBE"), inDoubt.getMessage());
            assertFalse(onA.describeClusterMirrors(List.of("from-b")).get("from-b").topics().containsKey(TOPIC),
                    "A's payments is not made a mirror topic");
            assertEquals(105, aAdmin.listOffsets(Map.of(TP, OffsetSpec.latest())).all().get().get(TP).offset(),
                    "A's log is untouched");
            superOnB.createMirrorAcls(List.of(mirrorAcl("from-a", "mirror", AclOperation.DESCRIBE)));
            Waits.waitUntil("A's failback starts once B lets the mirror principal describe from-a", () -> onA
                    .startMirrorTopics("from-b", List.of(TOPIC), List.of(), List.of()).isEmpty());
            MirrorInvariants.awaitMirrored(b, a, TP);
            MirrorAdmin.PartitionDescription back = onA.describeClusterMirrors(List.of("from-b")).get("from-b")
                    .topics().get(TOPIC).partitions().get(0);
            assertEquals(5, back.truncatedOffsets(), "the last mirrored epoch lookup over SASL_SSL found offset 100: "
                    + "only A's 5 own records were cut (a lookup that failed would have cut all 105)");
            assertTrue(back.state().equals("MIRRORING"), back.toString());

            // --verify reads the secured source with the credentials the operator gives it
            Path destinationConfig = writeProperties("a.properties", mirrorAdminConfigs(a, "broker",
                    BROKER_PASSWORD, "PLAIN"));
            Map<String, Object> sourceCredentials = new HashMap<>(source(b, certs));
            sourceCredentials.remove("bootstrap.servers");
            Path sourceConfig = writeProperties("b-source.properties", sourceCredentials);
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine verify = MirrorsCommand.newCommandLine();
            verify.setOut(new PrintWriter(out));
            verify.setErr(new PrintWriter(err));
            int exit = verify.execute("--bootstrap-server", a.bootstrapServers(), "--command-config",
                    destinationConfig.toString(), "--verify", "--mirror", "from-b", "--source-command-config",
                    sourceConfig.toString());
            assertEquals(0, exit, out + "\n" + err);
            assertTrue(out.toString().startsWith(TOPIC + " 0 identical up to "), out.toString());
        }
    }

    private static Path writeProperties(String name, Map<String, ?> configs) throws Exception {
        Path file = certificates.resolve(name);
        StringBuilder text = new StringBuilder();
        configs.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        Files.writeString(file, text.toString());
        return file;
    }

    /**
     * Point 6: the source's ACLs that {@code mirror.acls.include} selects appear on the destination; others do not;
     * one removed from the source stays on the destination.
     */
    private static void syncsSelectedAclsAndNeverDeletes(Admin aAdmin, Admin bAdmin) throws Exception {
        AclBinding appReads = allow("app", ResourceType.TOPIC, TOPIC, AclOperation.READ);
        AclBinding appWrites = allow("app", ResourceType.TOPIC, TOPIC, AclOperation.WRITE);
        AclBinding notSelected = allow("app", ResourceType.TOPIC, "other", AclOperation.READ);
        // reading the source's ACLs is the one extra privilege ACL sync needs
        aAdmin.createAcls(List.of(allow("mirror", ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE),
                appReads, notSelected)).all().get();
        Waits.waitUntil("app's READ on payments synced to B", () -> aclsOf(bAdmin, "app").contains(appReads),
                Duration.ofSeconds(30));
        aAdmin.deleteAcls(List.of(appReads.toFilter())).all().get();
        aAdmin.createAcls(List.of(appWrites)).all().get();
        Waits.waitUntil("app's WRITE synced to B, a pass after READ was removed on A",
                () -> aclsOf(bAdmin, "app").contains(appWrites), Duration.ofSeconds(30));
        assertEquals(Set.of(appReads, appWrites), Set.copyOf(aclsOf(bAdmin, "app")),
                "READ stays on B (never deleted), other is not selected");
    }

    private static Collection<AclBinding> aclsOf(Admin admin, String user) throws Exception {
        return admin.describeAcls(new AclBindingFilter(ResourcePatternFilter.ANY, new AccessControlEntryFilter(
                "User:" + user, null, AclOperation.ANY, AclPermissionType.ANY))).values().get();
    }

    /**
     * On a cluster that is a mirror's source and hosts the mirror {@code hosted} (which will mirror the topic back):
     * the mirror principal reads the topic and its configs and describes the synced group, and describes
     * {@code hosted}, whose last mirrored epochs a failback from here asks for; the operator creates, starts and
     * fails over, and changes the configs of {@code hosted}, and alters the topic's configs (start, failover).
     */
    private static void grantLeastPrivileges(Admin admin, MirrorAdmin superUser, String hosted) throws Exception {
        admin.createAcls(List.of(
                allow("mirror", ResourceType.TOPIC, TOPIC, AclOperation.READ),
                allow("mirror", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE_CONFIGS),
                allow("mirror", ResourceType.GROUP, GROUP, AclOperation.DESCRIBE),
                allow("operator", ResourceType.TOPIC, TOPIC, AclOperation.ALTER_CONFIGS))).all().get();
        superUser.createMirrorAcls(List.of(
                mirrorAcl(hosted, "operator", AclOperation.CREATE),
                mirrorAcl(hosted, "operator", AclOperation.ALTER),
                mirrorAcl(hosted, "operator", AclOperation.ALTER_CONFIGS),
                mirrorAcl(hosted, "mirror", AclOperation.DESCRIBE)));
    }

    private static AclBinding allow(String user, ResourceType type, String name, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }

    private static MirrorAcl mirrorAcl(String mirror, String user, AclOperation operation) {
        return new MirrorAcl(mirror, PatternType.LITERAL, "User:" + user, "*", operation, AclPermissionType.ALLOW);
    }

    /** Creates the mirror as the operator; false while its ACL is not applied yet. */
    private static boolean createdAs(MirrorAdmin operator, String mirror, Map<String, String> configs)
            throws Exception {
        try {
            operator.createClusterMirror(mirror, configs);
            return true;
        } catch (MirrorException e) {
            if (e.errorCode() == MirrorErrors.CLUSTER_MIRROR_AUTHORIZATION_FAILED.code) {
                return false;
            }
            throw e;
        }
    }

    /** One broker serving only SASL_SSL and enforcing ACLs; brokers log in with PLAIN, users with SCRAM-SHA-512. */
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
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;")
                .brokerProperty("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .brokerProperty("super.users", "User:broker")
                .brokerProperty("password.encoder.secret", "encoder-secret");
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

    private static Map<String, Object> mirrorAdminConfigs(TestCluster cluster, String user, String password,
                                                          String mechanism) {
        Map<String, Object> cfg = new HashMap<>(cluster.clientProperties());
        cfg.put("bootstrap.servers", cluster.bootstrapServers());
        cfg.put(SaslConfigs.SASL_MECHANISM, mechanism);
        cfg.put(SaslConfigs.SASL_JAAS_CONFIG, (mechanism.equals("PLAIN")
                ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                : "org.apache.kafka.common.security.scram.ScramLoginModule")
                + " required username=\"" + user + "\" password=\"" + password + "\";");
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
