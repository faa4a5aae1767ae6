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
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0), broker(1), broker(2)), FOO_0, null));
    }

    @Test
    void aBrokerWhoseReplicaIsOfflineIsNotEligibleForThatPartitionOnly() {
        Map<Integer, BrokerRegistration> b = brokers(broker(0, FOO_0), broker(1), broker(2));
        assertEquals(Set.of(1, 2), EligibleReplicas.of(ALL, b, FOO_0, null));
        assertSame(ALL, EligibleReplicas.of(ALL, b, FOO_1, null));
    }

    @Test
    void aReCreatedTopicOfTheSameNameIsNotOffline() {
        TopicIdPartition recreated = new TopicIdPartition(Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg"), 0, "foo");
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0, FOO_0), broker(1), broker(2)), recreated, null));
    }

    @Test
    void unavailableBrokersStayOut() {
        assertEquals(Set.of(2), EligibleReplicas.of(Set.of(0, 2), brokers(broker(0, FOO_0), broker(2)), FOO_0, null));
    }

    @Test
    void anOfflineLeaderLosesLeadershipToTheNextIsrMemberAndLeavesTheIsr() {
        Set<Integer> eligible = EligibleReplicas.of(ALL, brokers(broker(0, FOO_0), broker(1), broker(2)), FOO_0, null);
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(0, 4, List.of(0, 1, 2), 9),
                List.of(0, 1, 2), eligible, Set.of(), false);
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1, 2), 10)), next);
    }

    @Test
    void anOfflineReplicaIsNeverElectedUncleanly() {
        // ISR [0] and 0's replica is offline: with unclean election the live replica 1 leads, never 0
        Set<Integer> eligible = EligibleReplicas.of(Set.of(0, 1), brokers(broker(0, FOO_0), broker(1)), FOO_0, null);
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

    /** Broker {@code id} lost its log of {@code partition} in leader epoch 4. */
    private static BrokerRegistration lost(int id, TopicIdPartition partition) {
        return broker(id).withLost(Map.of(partition, 4));
    }

    /** Campaign defect 3: broker 1 restarted with an empty disk while in the ISR [2, 1, 0]; 0 and 2 are down. */
    @Test
    void aReplicaLostWithItsDiskIsNeverElectedFromTheIsrItWasInBefore() {
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        Set<Integer> eligible = EligibleReplicas.of(Set.of(1), b, FOO_0, null);
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
                EligibleReplicas.of(ALL, b, FOO_0, null), Set.of(), false);
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(1), 10)), next);
        assertEquals(Optional.empty(), PartitionChanges.onBrokersChanged(next.get(), List.of(1, 0, 2),
                EligibleReplicas.of(ALL, b, FOO_0, null), Set.of(), false), "and stays so while 1 is lost");
    }

    @Test
    void aLostReplicaIsOutForThatPartitionOnlyUntilItsBrokerDropsTheEntry() {
        Map<Integer, BrokerRegistration> b = brokers(broker(0), lost(1, FOO_0), broker(2));
        Set<Integer> eligible = EligibleReplicas.of(ALL, b, FOO_0, null);
        assertEquals(Set.of(0, 2), eligible);
        assertEquals(Set.of(1), EligibleReplicas.lost(b, FOO_0, null));
        assertEquals(Optional.of(new PartitionState(0, 4, List.of(0, 2), 10)), PartitionChanges.onBrokersChanged(
                new PartitionState(0, 4, List.of(0, 1, 2), 9), List.of(0, 1, 2), eligible, Set.of(), false));
        assertSame(ALL, EligibleReplicas.of(ALL, b, FOO_1, null), "another partition");
        assertSame(ALL, EligibleReplicas.of(ALL, brokers(broker(0), broker(1), broker(2)), FOO_0, null),
                "out of the ISR, the broker dropped the entry: a follower like any other");
    }

    @Test
    void anUncleanElectionPassesOverALostReplica() {
        // the last ISR member lost its disk: the operator's unclean election picks a replica that has data
        Map<Integer, BrokerRegistration> b = brokers(broker(0), lost(1, FOO_0), broker(2));
        Optional<PartitionState> next = PartitionChanges.onBrokersChanged(new PartitionState(-1, 4, List.of(1), 9),
                List.of(1, 0, 2), EligibleReplicas.of(ALL, b, FOO_0, null), Set.of(), true, Set.of(1));
        assertEquals(Optional.of(new PartitionState(0, 5, List.of(0), 10)), next);
    }

    @Test
    void withUncleanElectionAllowedALostReplicaLeadsOnlyWhenNoReplicaWithRecordsIsAlive() {
        // the campaign's SEED_000_UNCLEAN: the empty replica is the only live one, and the topic allows unclean
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        PartitionState before = new PartitionState(2, 4, List.of(2, 1, 0), 9);
        Set<Integer> eligible = EligibleReplicas.of(Set.of(1), b, FOO_0, null);
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(2), 10)), PartitionChanges.onBrokersChanged(
                before, List.of(2, 1, 0), eligible, Set.of(), false, Set.of(1)), "clean only: offline");
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1), 10)), PartitionChanges.onBrokersChanged(
                before, List.of(2, 1, 0), eligible, Set.of(), true, Set.of(1)), "unclean: the last resort leads");
    }

    @Test
    void theRegistrationCarriesLostReplicasThroughJson() {
        BrokerRegistration r = broker(3, FOO_1).withLost(Map.of(FOO_0, 4));
        BrokerRegistration back = BrokerRegistration.fromJson(3, 77L, Json.encode(r.toJson()), "test");
        assertEquals(Map.of(FOO_0, 4), back.lostReplicas());
        assertEquals(Set.of(FOO_1), back.offlineReplicas());
        assertEquals(Set.of(), BrokerRegistration.fromJson(3, 77L, Json.encode(broker(3).toJson()), "test")
                .lostReplicas().keySet(), "absent when none is lost");
    }

    /** The unclean election of a lost replica is a new leadership of it: from then on it is a replica as any. */
    @Test
    void aLostReplicaElectedUncleanlyInALaterEpochIsNoLongerLost() {
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        PartitionState before = new PartitionState(1, 4, List.of(1, 0, 2), 9);
        Optional<PartitionState> elected = PartitionChanges.onBrokersChanged(before, List.of(1, 0, 2),
                EligibleReplicas.of(Set.of(1), b, FOO_0, before), Set.of(), true, Set.of(1));
        assertEquals(Optional.of(new PartitionState(1, 5, List.of(1), 10)), elected,
                "the same broker, a new epoch: its leadership from before the loss is not this one");
        assertEquals(Set.of(1), EligibleReplicas.of(Set.of(1), b, FOO_0, elected.get()));
        assertEquals(Optional.empty(), PartitionChanges.onBrokersChanged(elected.get(), List.of(1, 0, 2),
                EligibleReplicas.of(Set.of(1), b, FOO_0, elected.get()), Set.of(), true, Set.of()),
                "stable: no new election each round");
    }

    /** Campaign seed 1: the lost broker led, the others were in the ISR with it and are down: they are kept. */
    @Test
    void theIsrKeptForAnOfflinePartitionIsItsMembersWithTheRecordsNotTheLostLeader() {
        Map<Integer, BrokerRegistration> b = brokers(lost(1, FOO_0));
        PartitionState before = new PartitionState(1, 4, List.of(1, 0, 2), 9);
        Optional<PartitionState> offline = PartitionChanges.onBrokersChanged(before, List.of(1, 0, 2),
                EligibleReplicas.of(Set.of(1), b, FOO_0, before), Set.of(), false, Set.of(1));
        assertEquals(Optional.of(new PartitionState(-1, 4, List.of(0, 2), 10)), offline);
        Map<Integer, BrokerRegistration> zeroBack = brokers(broker(0), lost(1, FOO_0));
        assertEquals(Optional.of(new PartitionState(0, 5, List.of(0), 11)), PartitionChanges.onBrokersChanged(
                offline.get(), List.of(1, 0, 2), EligibleReplicas.of(Set.of(0, 1), zeroBack, FOO_0, offline.get()),
                Set.of(), false, Set.of(1)), "0 is back: it leads cleanly, with the records");
    }
}
