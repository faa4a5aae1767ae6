package io.twinlog.controller.metadata;

import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class ReplicaAssignorTest {

    @ParameterizedTest(name = "brokers={0} partitions={1} rf={2}")
    @CsvSource({"1,1,1", "1,8,1", "3,3,3", "3,12,2", "5,20,3", "6,7,3"})
    void everyPartitionGetsDistinctReplicasAndLeadersAreSpread(int brokers, int partitions, int rf) {
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < brokers; i++) {
            ids.add(i * 10); // ids need not be dense
        }
        Map<Integer, List<Integer>> a = ReplicaAssignor.assign(ids, 0, partitions, rf, 1, 0);
        assertEquals(partitions, a.size());
        Map<Integer, Integer> leaders = new HashMap<>();
        Map<Integer, Integer> replicasPerBroker = new HashMap<>();
        for (List<Integer> replicas : a.values()) {
            assertEquals(rf, replicas.size());
            assertEquals(rf, new HashSet<>(replicas).size(), "distinct replicas: " + replicas);
            assertTrue(ids.containsAll(replicas));
            leaders.merge(replicas.get(0), 1, Integer::sum);
            replicas.forEach(r -> replicasPerBroker.merge(r, 1, Integer::sum));
        }
        int maxLeaders = leaders.values().stream().max(Integer::compare).orElse(0);
        int minLeaders = ids.stream().mapToInt(id -> leaders.getOrDefault(id, 0)).min().orElse(0);
        assertTrue(maxLeaders - minLeaders <= 1, "leaders spread evenly: " + leaders);
        int maxReplicas = replicasPerBroker.values().stream().max(Integer::compare).orElse(0);
        int minReplicas = ids.stream().mapToInt(id -> replicasPerBroker.getOrDefault(id, 0)).min().orElse(0);
        assertTrue(maxReplicas - minReplicas <= rf, "replicas spread: " + replicasPerBroker);
    }

    @Test
    void newPartitionsAreNumberedAfterTheExistingOnes() {
        Map<Integer, List<Integer>> a = ReplicaAssignor.assign(List.of(1, 2, 3), 4, 2, 2, 0, 0);
        assertEquals(List.of(4, 5), List.copyOf(a.keySet()));
    }

    @Test
    void sameInputsSameAssignment() {
        assertEquals(ReplicaAssignor.assign(List.of(1, 2, 3, 4), 0, 10, 3, 2, 1),
                ReplicaAssignor.assign(List.of(1, 2, 3, 4), 0, 10, 3, 2, 1));
    }

    @Test
    void replicationFactorAboveLiveBrokersIsKafkasError() {
        InvalidReplicationFactorException e = assertThrows(InvalidReplicationFactorException.class,
                () -> ReplicaAssignor.assign(List.of(1, 2), 0, 1, 3, 0, 0));
        assertEquals("Replication factor: 3 larger than available brokers: 2.", e.getMessage());
    }
}
