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

/**
 * Replicas in a failed log dir, or lost with a disk at the current partition epoch, are not eligible, and the
 * election rules then treat them as on a dead broker.
 */
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

    private static BrokerRegistration lost(int id, TopicIdPartition partition) {
        return broker(id).withLost(Set.of(partition));
    }

    /** Campaign defect 3: broker 1 restarted with an empty disk while in the ISR [2, 1, 0]; 0 and 2 are down. */
    @Test
    void aReplicaLostWithItsDiskIsNeverElectedFromTheIsrItWasInBefore() {
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        Set<Integer> eligible = EligibleReplicas.of(Set.of(1), b, FOO_0);
        assertEquals(Set.of(), eligible);
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(2, 4, List.of(2, 1, 0), 9),
                List.of(2, 1, 0), eligible, Set.of(), false);
        // offline, the last leader kept as the ISR: it leads cleanly when it is back, with the records
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(2), 10)), next);
    }

    /** Broker 1 lost its disk and was the only ISR member: it stays in the ISR, lost, and never leads cleanly. */
    @Test
    void aLostLastIsrMemberKeepsThePartitionOfflineInsteadOfLeadingIt() {
        Map<Integer, BrokerRegistration> b = brokers(broker(0), lost(1, FOO_0), broker(2));
        PartitionState onlyOne = new PartitionState(1, 4, List.of(1), 9);
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(onlyOne, List.of(1, 0, 2),
                EligibleReplicas.of(ALL, b, FOO_0), Set.of(), false);
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(1), 10)), next);
        assertEquals(Optional.empty(), PartitionChanges.onBrokersChanged(next.get(), List.of(1, 0, 2),
                EligibleReplicas.of(ALL, b, FOO_0), Set.of(), false), "and stays so while 1 is lost");
    }

    @Test
    void aLostReplicaIsOutForThatPartitionOnlyUntilItsBrokerDropsTheEntry() {
        Map<Integer, BrokerRegistration> b = brokers(broker(0), lost(1, FOO_0), broker(2));
        Set<Integer> eligible = EligibleReplicas.of(ALL, b, FOO_0);
        assertEquals(Set.of(0, 2), eligible);
        assertEquals(Set.of(1), EligibleReplicas.lost(b, FOO_0));
        assertEquals(Optional.of(new PartitionState(0, 4, List.of(0, 2), 10)), PartitionChanges.onBrokersChanged(
                new PartitionState(0, 4, List.of(0, 1, 2), 9), List.of(0, 1, 2), eligible, Set.of(), false));
        assertSame(ALL, EligibleReplicas.of(ALL, b, FOO_1), "another partition");
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0), broker(1), broker(2)), FOO_0),
                "out of the ISR, the broker dropped the entry: a follower like any other");
    }

    @Test
    void anUncleanElectionPassesOverALostReplica() {
        // the last ISR member lost its disk: the operator's unclean election picks a replica that has data
        Map<Integer, BrokerRegistration> b = brokers(broker(0), lost(1, FOO_0), broker(2));
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(-1, 4, List.of(1), 9),
                List.of(1, 0, 2), EligibleReplicas.of(ALL, b, FOO_0), Set.of(), true, Set.of(1));
        assertEquals(Optional.of(new PartitionState(0, 5, List.of(0), 10)), next);
    }

    @Test
    void withUncleanElectionAllowedALostReplicaLeadsOnlyWhenNoReplicaWithRecordsIsAlive() {
        // the campaign's SEED_000_UNCLEAN: the empty replica is the only live one, and the topic allows unclean
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        PartitionState before = new PartitionState(2, 4, List.of(2, 1, 0), 9);
        Set<Integer> eligible = EligibleReplicas.of(Set.of(1), b, FOO_0);
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(2), 10)), PartitionChanges.onBrokersChanged(
                before, List.of(2, 1, 0), eligible, Set.of(), false, Set.of(1)), "clean only: offline");
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1), 10)), PartitionChanges.onBrokersChanged(
                before, List.of(2, 1, 0), eligible, Set.of(), true, Set.of(1)), "unclean: the last resort leads");
    }

    @Test
    void theRegistrationCarriesLostReplicasThroughJson() {
        BrokerRegistration r = broker(3, FOO_1).withLost(Set.of(FOO_0));
        BrokerRegistration back = BrokerRegistration.fromJson(3, 77L, Json.encode(r.toJson()), "test");
        assertEquals(Set.of(FOO_0), back.lostReplicas());
        assertEquals(Set.of(FOO_1), back.offlineReplicas());
        assertEquals(Set.of(), BrokerRegistration.fromJson(3, 77L, Json.encode(broker(3).toJson()), "test")
                .lostReplicas(), "absent when none is lost");
    }
}
