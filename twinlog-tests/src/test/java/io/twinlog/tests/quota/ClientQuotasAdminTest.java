package io.twinlog.tests.quota;

import io.twinlog.controller.zk.ZkPaths;
import io.twinlog.tests.KafkaTools;
import io.twinlog.tests.ToolResult;
import io.twinlog.tests.ZooKeeperNodes;
import io.twinlog.testkit.TestCluster;
import io.twinlog.testkit.Waits;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterClientQuotasOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Client quotas managed as a Kafka operator does (issue 28, point 3): Kafka's own {@code kafka-configs} and
 * {@code Admin.alterClientQuotas/describeClientQuotas} against a 2-broker cluster. A quota set through one broker is
 * described by both, stored in Kafka's ZooKeeper layout (sharing a user's node with its SCRAM credentials), refused
 * with Kafka's messages when invalid, and removed again.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ClientQuotasAdminTest {

    @TempDir
    static File workDir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = TestCluster.builder().brokers(2).build().start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void kafkaConfigsSetsAQuotaThatEveryBrokerDescribesUntilItIsDeleted() throws Exception {
        configs("--alter", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152",
                "--entity-type", "clients", "--entity-name", "limited").assertSuccess();
        ToolResult described = configs("--describe", "--entity-type", "clients", "--entity-name", "limited");
        described.assertSuccess();
        assertTrue(described.stdout().contains("producer_byte_rate=1048576.0")
                && described.stdout().contains("consumer_byte_rate=2097152.0"), described.all());
        ClientQuotaEntity limited = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "limited"));
        for (int broker : List.of(0, 1)) {
            Waits.waitFor("broker " + broker + " describes the quotas of client limited",
                    () -> describe(broker, ClientQuotaFilter.containsOnly(List.of(
                            ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.CLIENT_ID, "limited")))),
                    q -> q.equals(Map.of(limited, Map.of("producer_byte_rate", 1048576.0,
                            "consumer_byte_rate", 2097152.0))));
        }
        assertEquals("{\"version\":1,\"config\":{\"producer_byte_rate\":\"1048576\","
                + "\"consumer_byte_rate\":\"2097152\"}}", node(ZkPaths.CLIENT_CONFIGS + "/limited"),
                "Kafka's ZooKeeper layout, integral quotas as integers");

        configs("--alter", "--delete-config", "producer_byte_rate,consumer_byte_rate", "--entity-type", "clients",
                "--entity-name", "limited").assertSuccess();
        assertEquals(Map.of(), describe(0, ClientQuotaFilter.all()).entrySet().stream()
                .filter(e -> e.getKey().equals(limited)).collect(Collectors.toMap(
                        Map.Entry::getKey, Map.Entry::getValue)), "no quota of client limited left");
        assertNull(node(ZkPaths.CLIENT_CONFIGS + "/limited"), "the empty node is deleted");
    }

    @Test
    void defaultsAndUserClientPairsAreStoredWhereKafkaKeptThem() throws Exception {
        configs("--alter", "--add-config", "request_percentage=50", "--entity-type", "users", "--entity-default")
                .assertSuccess();
        configs("--alter", "--add-config", "producer_byte_rate=4096", "--entity-type", "users", "--entity-name",
                "alice", "--entity-type", "clients", "--entity-name", "app/1").assertSuccess();
        Map<String, String> userDefault = new HashMap<>();
        userDefault.put(ClientQuotaEntity.USER, null);
        Map<ClientQuotaEntity, Map<String, Double>> defaults = describe(1, ClientQuotaFilter.containsOnly(List.of(
                ClientQuotaFilterComponent.ofDefaultEntity(ClientQuotaEntity.USER))));
        assertEquals(Map.of(new ClientQuotaEntity(userDefault), Map.of("request_percentage", 50.0)), defaults);
        Map<ClientQuotaEntity, Map<String, Double>> pairs = describe(1, ClientQuotaFilter.contains(List.of(
                ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "alice"))));
        assertEquals(Map.of(new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice",
                ClientQuotaEntity.CLIENT_ID, "app/1")), Map.of("producer_byte_rate", 4096.0)), pairs);
        assertTrue(node(ZkPaths.USER_CONFIGS + "/<default>").contains("\"request_percentage\":\"50.0\""));
        // a client id is sanitized into a node name, as Kafka does ('/' cannot be in one)
        assertTrue(node(ZkPaths.USER_CONFIGS + "/alice/clients/app%2F1").contains("\"producer_byte_rate\":\"4096\""));
    }

    @Test
    void aUsersQuotaAndItsScramCredentialsShareItsNodeWithoutLosingEachOther() throws Exception {
        configs("--alter", "--add-config", "SCRAM-SHA-256=[iterations=4096,password=bob-secret]", "--entity-type",
                "users", "--entity-name", "bob").assertSuccess();
        configs("--alter", "--add-config", "consumer_byte_rate=65536", "--entity-type", "users", "--entity-name",
                "bob").assertSuccess();
        String both = node(ZkPaths.userConfig("bob"));
        assertTrue(both.contains("SCRAM-SHA-256") && both.contains("\"consumer_byte_rate\":\"65536\""), both);
        configs("--alter", "--delete-config", "consumer_byte_rate", "--entity-type", "users", "--entity-name", "bob")
                .assertSuccess();
        String credentialsOnly = node(ZkPaths.userConfig("bob"));
        assertTrue(credentialsOnly.contains("SCRAM-SHA-256") && !credentialsOnly.contains("consumer_byte_rate"),
                credentialsOnly);
        ToolResult described = configs("--describe", "--entity-type", "users", "--entity-name", "bob");
        assertTrue(described.stdout().contains("SCRAM-SHA-256=iterations=4096"), described.all());
    }

    @Test
    void invalidQuotasAreRefusedWithKafkasMessagesAndNothingIsWritten() throws Exception {
        ClientQuotaEntity client = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "refused"));
        assertRefused(client, "no_such_quota", 5.0, "Invalid configuration key no_such_quota");
        assertRefused(client, "producer_byte_rate", 1.5, "producer_byte_rate cannot be a fractional value.");
        assertRefused(client, "producer_byte_rate", 0.0, "Quota producer_byte_rate must be greater than 0");
        assertRefused(client, "request_percentage", Double.NaN, "Quota request_percentage must be greater than 0");
        assertRefused(new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "127.0.0.1", ClientQuotaEntity.USER, "u")),
                "connection_creation_rate", 5.0, "Invalid quota entity combination, IP entity shouldnot be "
                        + "combined with User or ClientId");
        assertRefused(new ClientQuotaEntity(Map.of(ClientQuotaEntity.IP, "127.0.0.1")), "producer_byte_rate",
                5.0, "Invalid configuration key producer_byte_rate");
        assertRefused(new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "")), "producer_byte_rate",
                5.0, "Empty client-id not supported");
        // validate-only: accepted, and nothing stored
        try (Admin admin = admin(0)) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(client, List.of(
                    new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0)))),
                    new AlterClientQuotasOptions().validateOnly(true)).all().get(30, TimeUnit.SECONDS);
        }
        assertNull(node(ZkPaths.CLIENT_CONFIGS + "/refused"), "nothing written for a refused or validate-only alter");
    }

    /**
     * Two admins, bootstrapped from different brokers, alter one user's quotas at the same time (each alter is a
     * read-modify-write of the user's whole ZooKeeper node): a write that lost the race is retried on the new
     * contents, so every key each of them set is there after every round, on both brokers.
     */
    @Test
    void concurrentAlterationsOfOneUserLoseNothing() throws Exception {
        ClientQuotaEntity user = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "contended"));
        int rounds = 20;
        try (Admin first = admin(0); Admin second = admin(1)) {
            for (int round = 1; round <= rounds; round++) {
                KafkaFuture<Void> a = first.alterClientQuotas(List.of(new ClientQuotaAlteration(user,
                        List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1000.0 * round))))).all();
                KafkaFuture<Void> b = second.alterClientQuotas(List.of(new ClientQuotaAlteration(user,
                        List.of(new ClientQuotaAlteration.Op("consumer_byte_rate", 2000.0 * round))))).all();
                a.get(30, TimeUnit.SECONDS);
                b.get(30, TimeUnit.SECONDS);
                Map<String, Double> expected = Map.of("producer_byte_rate", 1000.0 * round,
                        "consumer_byte_rate", 2000.0 * round);
                for (int broker : List.of(0, 1)) {
                    Waits.waitFor("round " + round + ": broker " + broker + " describes both keys",
                            () -> describe(broker, ClientQuotaFilter.containsOnly(List.of(
                                    ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "contended")))),
                            q -> q.equals(Map.of(user, expected)));
                }
            }
        }
    }

    private static void assertRefused(ClientQuotaEntity entity, String key, double value, String message)
            throws Exception {
        try (Admin admin = admin(0)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> admin.alterClientQuotas(List.of(
                    new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op(key, value)))))
                    .all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(InvalidRequestException.class, e.getCause(), e.toString());
            assertEquals(message, e.getCause().getMessage());
        }
    }

    private static Map<ClientQuotaEntity, Map<String, Double>> describe(int broker, ClientQuotaFilter filter)
            throws Exception {
        try (Admin admin = admin(broker)) {
            return admin.describeClientQuotas(filter).entities().get(30, TimeUnit.SECONDS);
        }
    }

    private static Admin admin(int broker) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:" + cluster.broker(broker).boundPort("PLAINTEXT")));
    }

    /** The node's data as text, null when it does not exist. */
    private static String node(String path) throws Exception {
        return ZooKeeperNodes.read(cluster.zookeeperConnect(), path);
    }

    private static ToolResult configs(String... args) throws Exception {
        return KafkaTools.configs(workDir, cluster.bootstrapServers(), args);
    }
}
