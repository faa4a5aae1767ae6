package io.twinlog.controller.metadata;

import io.twinlog.common.Endpoint;
import io.twinlog.controller.zk.Json;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's ZooKeeper records bound by Jackson: each writes byte for byte the JSON of docs/zookeeper-layout.md
 * (as the hand-built maps did), reads documents in that format, and ignores fields a newer version may add.
 */
@Timeout(10)
class MetadataJsonTest {
    private static final Uuid TOPIC_ID = Uuid.fromString("q2Rk8iWTTnOlgA9vRB0wRw");

    @Test
    void partitionStateKeepsItsFormat() {
        String stored = "{\"version\":1,\"leader\":2,\"leaderEpoch\":7,\"isr\":[2,3],\"partitionEpoch\":11}";
        PartitionState state = new PartitionState(2, 7, List.of(2, 3), 11);
        assertEquals(stored, text(state.toJson()));
        assertEquals(state, PartitionState.fromJson(bytes(stored), "/p"));
    }

    @Test
    void partitionStateDefaultsAndUnknownFields() {
        assertEquals(new PartitionState(-1, 0, List.of(), 0), PartitionState.fromJson(
                bytes("{\"version\":1,\"leader\":-1,\"leaderEpoch\":0,\"addedLater\":{\"x\":1}}"), "/p"),
                "no isr or partitionEpoch (older records): empty and 0; an unknown field is skipped");
    }

    @Test
    void topicAssignmentKeepsItsFormat() {
        String stored = "{\"version\":1,\"topicId\":\"" + TOPIC_ID + "\",\"partitions\":{\"0\":[1,2],\"1\":[2,3],"
                + "\"10\":[3,1]}}";
        TopicAssignment assignment = TopicAssignment.of(TOPIC_ID, Map.of(10, List.of(3, 1), 0, List.of(1, 2),
                1, List.of(2, 3)));
        assertEquals(stored, text(assignment.toJson()), "partitions in numeric order, no reassigning when none");
        assertEquals(assignment, TopicAssignment.fromJson(bytes(stored), "/t"));
    }

    @Test
    void topicAssignmentWithAReassignmentKeepsItsFormat() {
        String stored = "{\"version\":1,\"topicId\":\"" + TOPIC_ID + "\",\"partitions\":{\"0\":[1,2,3]},"
                + "\"reassigning\":{\"0\":{\"target\":[2,3,4],\"original\":[1,2,3]}}}";
        TopicAssignment assignment = TopicAssignment.of(TOPIC_ID, Map.of(0, List.of(1, 2, 3)))
                .withReassigning(Map.of(0, new TopicAssignment.Reassignment(List.of(2, 3, 4), List.of(1, 2, 3))));
        assertEquals(stored, text(assignment.toJson()));
        TopicAssignment read = TopicAssignment.fromJson(bytes(stored), "/t");
        assertEquals(assignment, read);
        assertEquals(List.of(4), read.reassigning().get(0).adding());
    }

    @Test
    void brokerRegistrationKeepsItsFormat() {
        String plain = "{\"version\":1,\"endpoints\":[\"PLAINTEXT://localhost:9092\",\"INTERNAL://10.0.0.1:9093\"]}";
        BrokerRegistration registration = new BrokerRegistration(1, List.of(new Endpoint("PLAINTEXT", "localhost",
                9092), new Endpoint("INTERNAL", "10.0.0.1", 9093)), Optional.empty(), 42L, false, List.of(), Set.of());
        assertEquals(plain, text(registration.toJson()), "no rack and not shutting down: both absent");
        assertEquals(registration, BrokerRegistration.fromJson(1, 42L, bytes(plain), "/b"));

        String full = "{\"version\":1,\"endpoints\":[\"PLAINTEXT://localhost:9092\"],\"rack\":\"r1\","
                + "\"shuttingDown\":true}";
        BrokerRegistration leaving = new BrokerRegistration(1, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)),
                Optional.of("r1"), 42L, true, List.of(), Set.of());
        assertEquals(full, text(leaving.toJson()));
        assertEquals(leaving, BrokerRegistration.fromJson(1, 42L, bytes(full), "/b"));

        String offline = "{\"version\":1,\"endpoints\":[\"PLAINTEXT://localhost:9092\"],"
                + "\"offlineLogDirs\":[\"/d2\"],\"offlineReplicas\":[{\"topic\":\"t\",\"topicId\":\"" + TOPIC_ID
                + "\",\"partitions\":[0,2]}]}";
        BrokerRegistration failedDir = new BrokerRegistration(1, List.of(new Endpoint("PLAINTEXT", "localhost", 9092)),
                Optional.empty(), 42L, false, List.of("/d2"),
                Set.of(new TopicIdPartition(TOPIC_ID, 2, "t"), new TopicIdPartition(TOPIC_ID, 0, "t")));
        assertEquals(offline, text(failedDir.toJson()), "offline dirs and replicas, by topic, partitions in order");
        assertEquals(failedDir, BrokerRegistration.fromJson(1, 42L, bytes(offline), "/b"));
    }

    @Test
    void aCorruptRecordNamesItsPath() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> PartitionState.fromJson(bytes("{\"leader\":"), "/brokers/topics/t/partitions/0/state"));
        assertTrue(e.getMessage().startsWith("Corrupt JSON at ZooKeeper path /brokers/topics/t/partitions/0/state"),
                e.getMessage());
    }

    private static String text(Object document) {
        return new String(Json.encode(document), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
