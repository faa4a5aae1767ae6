package io.twinlog.controller.metadata;

import org.apache.kafka.common.errors.InvalidReplicationFactorException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Assigns replicas of new partitions to brokers, spreading leaders (first replicas) and followers evenly as
 * Kafka's rack-unaware assignment does: partition p's leader is broker (start + p) mod n, and its followers follow
 * at a shift that grows each time the leaders wrap around the broker list, so followers of one broker's leaders are
 * not all on the same other broker.
 *
 * <p>Pure: the start index and shift come from the caller (a seeded {@link Random} in production).
 */
public final class ReplicaAssignor {
    private ReplicaAssignor() {
    }

    /**
     * @param brokerIds    live brokers, sorted
     * @param firstPartition index of the first partition to assign (existing partition count for CreatePartitions)
     * @param startIndex   index into brokerIds of the first partition's leader
     * @param initialShift follower shift of the first partition
     */
    public static Map<Integer, List<Integer>> assign(List<Integer> brokerIds, int firstPartition, int numPartitions,
                                                     int replicationFactor, int startIndex, int initialShift) {
        int n = brokerIds.size();
        if (replicationFactor <= 0) {
            throw new InvalidReplicationFactorException("Replication factor must be larger than 0.");
        }
        if (replicationFactor > n) {
            throw new InvalidReplicationFactorException("Replication factor: " + replicationFactor
                    + " larger than available brokers: " + n + ".");
        }
        Map<Integer, List<Integer>> out = new LinkedHashMap<>();
        int shift = initialShift;
        for (int i = 0; i < numPartitions; i++) {
            int p = firstPartition + i;
            if (i > 0 && (startIndex + i) % n == 0) {
                shift++;
            }
            int leaderIndex = (startIndex + i) % n;
            List<Integer> replicas = new ArrayList<>();
            replicas.add(brokerIds.get(leaderIndex));
            for (int j = 0; j < replicationFactor - 1; j++) {
                int followerShift = 1 + (shift + j) % (n - 1);
                replicas.add(brokerIds.get((leaderIndex + followerShift) % n));
            }
            out.put(p, List.copyOf(replicas));
        }
        return out;
    }
}
