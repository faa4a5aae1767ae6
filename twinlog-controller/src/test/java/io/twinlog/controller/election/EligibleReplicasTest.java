package io.twinlog.controller.election;

import io.twinlog.controller.metadata.BrokerRegistration;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.zk.Json;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** Replicas in a failed log dir are not eligible, and the election rules then treat them as on a dead broker. */
@Timeout(10)
class EligibleReplicasTest {
    private static final Uuid TOPIC_ID = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private static final TopicIdPartition FOO_0 = new TopicIdPartition(TOPIC_ID, 0, "foo");
    private static final TopicIdPartition FOO_1 = new TopicIdPartition(TOPIC_ID, 1, "foo");
    private static final Set<Integer> ALL = Set.of(0, 1, 2);

    private static BrokerRegistration broker(int id, TopicIdPartition... offline) {
        return new BrokerRegistration(id, List.of(), Optional.empty())
                .withOffline(offline.length == 0 ? List.of() : List.of("/data/" + id), Set.of(offline));
    }

    private static Map<Integer, BrokerRegistration> brokers(BrokerRegistration... registrations) {
        Map<Integer, BrokerRegistration> out = new HashMap<>();
        for (BrokerRegistration r : registrations) {
            out.put(r.id(), r);
        }
        return out;
    }

    @Test
    void withNoFailedDirTheAvailableSetIsReturnedAsIs() {
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0), broker(1), broker(2)), FOO_0));
    }

    @Test
    void aBrokerWhoseReplicaIsOfflineIsNotEligibleForThatPartitionOnly() {
        Map<Integer, BrokerRegistration> b = brokers(broker(0, FOO_0), broker(1), broker(2));
        assertEquals(Set.of(1, 2), EligibleReplicas.of(ALL, b, FOO_0));
        assertSame(ALL, EligibleReplicas.of(ALL, b, FOO_1));
    }

    @Test
    void aReCreatedTopicOfTheSameNameIsNotOffline() {
        TopicIdPartition recreated = new TopicIdPartition(Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg"), 0, "foo");
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0, FOO_0), broker(1), broker(2)), recreated));
    }

    @Test
    void unavailableBrokersStayOut() {
        assertEquals(Set.of(2), EligibleReplicas.of(Set.of(0, 2), brokers(broker(0, FOO_0), broker(2)), FOO_0));
    }

    @Test
    void anOfflineLeaderLosesLeadershipToTheNextIsrMemberAndLeavesTheIsr() {
        Set<Integer> eligible = EligibleReplicas.of(ALL, brokers(broker(0, FOO_0), broker(1), broker(2)), FOO_0);
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(0, 4, List.of(0, 1, 2), 9),
                List.of(0, 1, 2), eligible, Set.of(), false);
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1, 2), 10)), next);
    }

    @Test
    void anOfflineReplicaIsNeverElectedUncleanly() {
        // ISR [0] and 0's replica is offline: with unclean election the live replica 1 leads, never 0
        Set<Integer> eligible = EligibleReplicas.of(Set.of(0, 1), brokers(broker(0, FOO_0), broker(1)), FOO_0);
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(0, 4, List.of(0), 9),
                List.of(0, 1), eligible, Set.of(), true);
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1), 10)), next);
    }

    @Test
    void theRegistrationCarriesOfflineReplicasThroughJson() {
        BrokerRegistration r = broker(3, FOO_0, FOO_1);
        BrokerRegistration back = BrokerRegistration.fromJson(3, 77L, Json.encode(r.toJson()), "test");
        assertEquals(Set.of(FOO_0, FOO_1), back.offlineReplicas());
        assertEquals(List.of("/data/3"), back.offlineLogDirs());
    }
}
