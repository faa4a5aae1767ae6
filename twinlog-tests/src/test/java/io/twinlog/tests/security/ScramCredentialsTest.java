package io.twinlog.tests.security;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnacceptableCredentialException;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SCRAM users (issue 13, point 2) managed with Kafka's own {@code kafka-configs} against a 2-broker cluster whose
 * SASL_PLAINTEXT listeners enable SCRAM-SHA-256 and SCRAM-SHA-512: a user added through one broker authenticates on
 * every broker without a restart, is described with its mechanism and iterations, is stored salted (never the
 * password), and once deleted can no longer log in.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ScramCredentialsTest {
    private static final String SCRAM_SERVER = "org.apache.kafka.common.security.scram.ScramLoginModule required;";

    @TempDir
    static File workDir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(2)
                .brokerProperty("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0")
                .brokerProperty("inter.broker.listener.name", "PLAINTEXT")
                .brokerProperty("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512")
                // Kafka's SASL server wants a JAAS section per mechanism, even one with nothing in it
                .brokerProperty("listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config", SCRAM_SERVER)
                .brokerProperty("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config", SCRAM_SERVER)
                .build().start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aUserAddedWithKafkaConfigsLogsInOnEveryBrokerUntilDeleted() throws Exception {
        configs("--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]",
                "--entity-type", "users", "--entity-name", "alice").assertSuccess();
        for (int broker : List.of(0, 1)) {
            Waits.waitUntil("alice logs in on broker " + broker, () -> logsIn(broker, "alice", "alice-secret"));
        }
        assertFalse(logsIn(0, "alice", "wrong-secret"), "a wrong password is refused");

        ToolResult described = configs("--describe", "--entity-type", "users", "--entity-name", "alice");
        described.assertSuccess();
        assertTrue(described.stdout().contains("SCRAM-SHA-256=iterations=8192"), described.toString());

        try (ZooKeeper zk = new ZooKeeper(cluster.zookeeperConnect(), 10_000, event -> { })) {
            String stored = new String(zk.getData(ZkPaths.userConfig("alice"), false, null), StandardCharsets.UTF_8);
            assertTrue(stored.contains("SCRAM-SHA-256") && stored.contains("salt=") && stored.contains("stored_key="),
                    stored);
            assertFalse(stored.contains("alice-secret"), "never the password: " + stored);
        }

        configs("--alter", "--delete-config", "SCRAM-SHA-256", "--entity-type", "users", "--entity-name", "alice")
                .assertSuccess();
        for (int broker : List.of(0, 1)) {
            Waits.waitUntil("alice can no longer log in on broker " + broker,
                    () -> !logsIn(broker, "alice", "alice-secret"));
        }
    }

    @Test
    void badRequestsGetKafkasErrors() throws Exception {
        try (Admin admin = cluster.admin()) {
            ExecutionException tooFew = assertThrows(ExecutionException.class, () -> admin
                    .alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("bob",
                            new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 100), "bob-secret")))
                    .all().get());
            assertTrue(tooFew.getCause() instanceof UnacceptableCredentialException, tooFew.toString());
            ExecutionException unknown = assertThrows(ExecutionException.class, () -> admin
                    .describeUserScramCredentials(List.of("nobody")).description("nobody").get());
            assertTrue(unknown.getCause() instanceof ResourceNotFoundException, unknown.toString());

            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("carol",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "carol-secret"))).all().get();
            Waits.waitUntil("carol described through the other broker", () -> {
                try (Admin other = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                        "127.0.0.1:" + cluster.broker(1).boundPort("PLAINTEXT")))) {
                    UserScramCredentialsDescription d = other.describeUserScramCredentials(List.of("carol"))
                            .description("carol").get();
                    return d.credentialInfos().equals(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512,
                            4096)));
                }
            });
            Waits.waitUntil("carol logs in with SCRAM-SHA-512", () -> logsIn(1, "carol", "carol-secret",
                    "SCRAM-SHA-512"));
        }
    }

    private static boolean logsIn(int broker, String user, String password) {
        return logsIn(broker, user, password, "SCRAM-SHA-256");
    }

    private static boolean logsIn(int broker, String user, String password, String mechanism) {
        Map<String, Object> cfg = new HashMap<>();
        cfg.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:"
                + cluster.broker(broker).boundPort("SASL_PLAINTEXT"));
        cfg.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        cfg.put(SaslConfigs.SASL_MECHANISM, mechanism);
        cfg.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                + "username=\"" + user + "\" password=\"" + password + "\";");
        cfg.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        cfg.put(CommonClientConfigs.DEFAULT_API_TIMEOUT_MS_CONFIG, 8_000);
        try (Admin admin = Admin.create(cfg)) {
            admin.describeCluster().nodes().get(10, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SaslAuthenticationException) {
                return false;
            }
            throw new IllegalStateException("unexpected failure logging in as " + user, e);
        } catch (Exception e) {
            throw new IllegalStateException("unexpected failure logging in as " + user, e);
        }
    }

    private static ToolResult configs(String... args) throws Exception {
        return KafkaTools.configs(workDir, cluster.bootstrapServers(), args);
    }
}
