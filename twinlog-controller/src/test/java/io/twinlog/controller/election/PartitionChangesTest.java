package io.twinlog.controller.election;

import io.twinlog.controller.election.PartitionChanges.AlterResult;
import io.twinlog.controller.election.PartitionChanges.ElectionResult;
import io.twinlog.controller.metadata.PartitionState;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's leadership decisions, one rule per test, against Kafka's rules: clean elections from the ISR in
 * replica order, the ISR never emptied, unclean elections only when allowed and only when no ISR member is alive,
 * controlled shutdown, operator elections and AlterPartition fencing.
 */
@Timeout(60)
class PartitionChangesTest {
    private static final List<Integer> REPLICAS = List.of(0, 1, 2);
    private static final int NO_LEADER = PartitionState.NO_LEADER;

    private static PartitionState state(int leader, int leaderEpoch, List<Integer> isr, int partitionEpoch) {
        return new PartitionState(leader, leaderEpoch, isr, partitionEpoch);
    }

    private static Optional<PartitionState> onBrokers(PartitionState s, List<Integer> replicas, Set<Integer> live,
                                                      Set<Integer> shuttingDown, boolean unclean) {
        return PartitionChanges.onBrokersChanged(s, replicas, live, shuttingDown, unclean);
    }

    @Nested
    class Initial {
        @Test
        void firstLiveReplicaLeadsInEpochZeroWithTheLiveReplicasAsIsr() {
            assertEquals(state(1, 0, List.of(1, 2), 0), PartitionChanges.initial(List.of(0, 1, 2), Set.of(1, 2)));
            assertEquals(state(2, 0, List.of(2, 0, 1), 0), PartitionChanges.initial(List.of(2, 0, 1), Set.of(0, 1, 2)));
        }

        @Test
        void noLiveReplicaMeansOfflineWithTheWholeAssignmentAsIsr() {
            assertEquals(state(NO_LEADER, 0, List.of(0, 1), 0), PartitionChanges.initial(List.of(0, 1), Set.of(2)));
        }
    }

    @Nested
    class CleanElection {
        @Test
        void nothingChangesWhileEveryIsrMemberIsAlive() {
            assertEquals(Optional.empty(), onBrokers(state(0, 3, List.of(0, 1, 2), 7), REPLICAS, Set.of(0, 1, 2),
                    Set.of(), false));
        }

        @Test
        void deadLeaderIsReplacedByTheFirstLiveIsrMemberInReplicaOrder() {
            // replica order [2, 0, 1] decides, not the ISR order [2, 1, 0]
            PartitionState s = state(2, 3, List.of(2, 1, 0), 7);
            assertEquals(Optional.of(state(0, 4, List.of(1, 0), 8)),
                    onBrokers(s, List.of(2, 0, 1), Set.of(0, 1), Set.of(), false));
        }

        @Test
        void outOfSyncReplicasAreNotCandidatesOfACleanElection() {
            // replica 1 is alive and first in replica order, but out of sync
            PartitionState s = state(0, 3, List.of(0, 2), 7);
            assertEquals(Optional.of(state(2, 4, List.of(2), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), false));
        }

        @Test
        void deadFollowerLeavesTheIsrAndTheLeaderEpochStays() {
            PartitionState s = state(0, 3, List.of(0, 1, 2), 7);
            assertEquals(Optional.of(state(0, 3, List.of(0, 1), 8)),
                    onBrokers(s, REPLICAS, Set.of(0, 1), Set.of(), false));
        }

        @Test
        void deadLeaderWithoutIsrSurvivorsLeavesThePartitionOfflineAndKeepsItInTheIsr() {
            PartitionState s = state(0, 3, List.of(0), 7);
            // the leader epoch is not bumped: nobody leads; the partition epoch records the change
            assertEquals(Optional.of(state(NO_LEADER, 3, List.of(0), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), false));
        }

        @Test
        void theIsrIsNeverEmptiedWhenAllItsMembersDieAtOnce() {
            PartitionState s = state(1, 3, List.of(0, 1), 7);
            PartitionState next = onBrokers(s, REPLICAS, Set.of(2), Set.of(), false).orElseThrow();
            assertEquals(NO_LEADER, next.leader());
            assertEquals(3, next.leaderEpoch());
            // the last leader stays: it holds every record the ISR acknowledged
            assertEquals(List.of(1), next.isr());
            assertEquals(8, next.partitionEpoch());
        }

        @Test
        void offlinePartitionStaysOfflineWhileItsIsrMemberIsAway() {
            PartitionState s = state(NO_LEADER, 3, List.of(0), 8);
            assertEquals(Optional.empty(), onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), false));
        }

        @Test
        void returningIsrMemberOfAnOfflinePartitionIsElected() {
            PartitionState s = state(NO_LEADER, 3, List.of(0), 8);
            assertEquals(Optional.of(state(0, 4, List.of(0), 9)),
                    onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(), false));
        }

        @Test
        void returningIsrMemberIsPreferredToUncleanCandidatesEvenWhenUncleanIsAllowed() {
            PartitionState s = state(NO_LEADER, 3, List.of(2), 8);
            assertEquals(Optional.of(state(2, 4, List.of(2), 9)),
                    onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(), true));
        }
    }

    @Nested
    class UncleanElection {
        @Test
        void liveOutOfSyncReplicaLeadsAloneInANewEpochWhenAllowed() {
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.of(state(1, 4, List.of(1), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), true));
        }

        @Test
        void offlinePartitionGetsAnUncleanLeaderWhenAllowed() {
            PartitionState s = state(NO_LEADER, 3, List.of(0), 8);
            assertEquals(Optional.of(state(2, 4, List.of(2), 9)),
                    onBrokers(s, REPLICAS, Set.of(2), Set.of(), true));
        }

        @Test
        void aLiveIsrMemberStillWinsOverOutOfSyncReplicas() {
            PartitionState s = state(0, 3, List.of(0, 2), 7);
            assertEquals(Optional.of(state(2, 4, List.of(2), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), true));
        }

        @Test
        void shuttingDownReplicasAreNotUncleanCandidates() {
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.of(state(2, 4, List.of(2), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(1), true));
        }

        @Test
        void noLiveReplicaAtAllLeavesThePartitionOffline() {
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.of(state(NO_LEADER, 3, List.of(0), 8)),
                    onBrokers(s, REPLICAS, Set.of(5), Set.of(), true));
        }
    }

    @Nested
    class ControlledShutdown {
        @Test
        void leadershipMovesToAnotherIsrMemberAndTheShuttingDownBrokerLeavesTheIsr() {
            PartitionState s = state(0, 3, List.of(0, 1, 2), 7);
            assertEquals(Optional.of(state(1, 4, List.of(1, 2), 8)),
                    onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(0), false));
        }

        @Test
        void shuttingDownFollowerLeavesTheIsr() {
            PartitionState s = state(0, 3, List.of(0, 1, 2), 7);
            assertEquals(Optional.of(state(0, 3, List.of(0, 1), 8)),
                    onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(2), false));
        }

        @Test
        void theOnlyIsrMemberKeepsLeadingUntilItStops() {
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.empty(), onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(0), false));
        }

        @Test
        void theOnlyIsrMemberKeepsLeadingEvenWhenUncleanElectionIsAllowed() {
            // Kafka never elects uncleanly while an in-sync replica is alive: a controlled shutdown is no reason
            // to give up records only the leader has
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.empty(), onBrokers(s, REPLICAS, Set.of(0, 1, 2), Set.of(0), true));
        }

        @Test
        void onceTheBrokerIsGoneThePartitionGoesOffline() {
            PartitionState s = state(0, 3, List.of(0), 7);
            assertEquals(Optional.of(state(NO_LEADER, 3, List.of(0), 8)),
                    onBrokers(s, REPLICAS, Set.of(1, 2), Set.of(), false));
        }
    }

    @Nested
    class PreferredElection {
        @Test
        void firstReplicaTakesOverWhenAliveAndInSync() {
            ElectionResult r = PartitionChanges.electPreferred(state(1, 3, List.of(0, 1, 2), 7), REPLICAS,
                    Set.of(0, 1, 2), Set.of());
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(0, 4, List.of(0, 1, 2), 8)), r.newState());
        }

        @Test
        void electionNotNeededWhenThePreferredReplicaLeads() {
            ElectionResult r = PartitionChanges.electPreferred(state(0, 3, List.of(0, 1, 2), 7), REPLICAS,
                    Set.of(0, 1, 2), Set.of());
            assertEquals(Errors.ELECTION_NOT_NEEDED, r.error());
            assertEquals(Optional.empty(), r.newState());
        }

        @Test
        void preferredReplicaNotAvailableWhenDeadOutOfSyncOrShuttingDown() {
            PartitionState s = state(1, 3, List.of(1, 2), 7);
            assertEquals(Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                    PartitionChanges.electPreferred(s, REPLICAS, Set.of(1, 2), Set.of()).error());
            assertEquals(Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                    PartitionChanges.electPreferred(s, REPLICAS, Set.of(0, 1, 2), Set.of()).error());
            PartitionState inSync = state(1, 3, List.of(0, 1, 2), 7);
            ElectionResult r = PartitionChanges.electPreferred(inSync, REPLICAS, Set.of(0, 1, 2), Set.of(0));
            assertEquals(Errors.PREFERRED_LEADER_NOT_AVAILABLE, r.error());
            assertEquals(Optional.empty(), r.newState());
        }
    }

    @Nested
    class UncleanElectionRequest {
        @Test
        void electionNotNeededWhileTheLeaderIsAlive() {
            ElectionResult r = PartitionChanges.electUnclean(state(0, 3, List.of(0), 7), REPLICAS, Set.of(0, 1, 2),
                    Set.of());
            assertEquals(Errors.ELECTION_NOT_NEEDED, r.error());
        }

        @Test
        void offlinePartitionGetsALiveOutOfSyncLeader() {
            ElectionResult r = PartitionChanges.electUnclean(state(NO_LEADER, 3, List.of(0), 8), REPLICAS,
                    Set.of(1, 2), Set.of());
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(1, 4, List.of(1), 9)), r.newState());
        }

        @Test
        void deadLeaderNotYetReplacedIsReplacedToo() {
            ElectionResult r = PartitionChanges.electUnclean(state(0, 3, List.of(0), 7), REPLICAS, Set.of(2),
                    Set.of());
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(2, 4, List.of(2), 8)), r.newState());
        }

        @Test
        void aLiveIsrMemberIsElectedCleanly() {
            ElectionResult r = PartitionChanges.electUnclean(state(NO_LEADER, 3, List.of(2), 8), REPLICAS,
                    Set.of(1, 2), Set.of());
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(2, 4, List.of(2), 9)), r.newState());
        }

        @Test
        void eligibleLeadersNotAvailableWithoutAnyLiveReplica() {
            ElectionResult r = PartitionChanges.electUnclean(state(NO_LEADER, 3, List.of(0), 8), REPLICAS, Set.of(7),
                    Set.of());
            assertEquals(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, r.error());
            assertEquals(Optional.empty(), r.newState());
            ElectionResult onlyShuttingDown = PartitionChanges.electUnclean(state(NO_LEADER, 3, List.of(0), 8),
                    REPLICAS, Set.of(1), Set.of(1));
            assertEquals(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, onlyShuttingDown.error());
        }
    }

    @Nested
    class AlterIsr {
        private final PartitionState current = state(0, 3, List.of(0, 1), 7);
        private final Set<Integer> live = Set.of(0, 1, 2);

        private AlterResult alter(int from, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
            return PartitionChanges.alterIsr(current, REPLICAS, live, from, leaderEpoch, partitionEpoch, newIsr);
        }

        @Test
        void leaderExpandsTheIsrWhichIsKeptInReplicaOrder() {
            AlterResult r = alter(0, 3, 7, List.of(2, 0, 1));
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(0, 3, List.of(0, 1, 2), 8)), r.newState());
        }

        @Test
        void leaderShrinksTheIsrEvenWhenTheRemovedMemberIsDead() {
            AlterResult r = PartitionChanges.alterIsr(current, REPLICAS, Set.of(0), 0, 3, 7, List.of(0));
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(state(0, 3, List.of(0), 8)), r.newState());
        }

        @Test
        void anUnchangedIsrAnswersWithTheCurrentState() {
            AlterResult r = alter(0, 3, 7, List.of(1, 0));
            assertEquals(Errors.NONE, r.error());
            assertEquals(Optional.of(current), r.newState());
        }

        @Test
        void onlyTheLeaderMayChangeTheIsr() {
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, alter(1, 3, 7, List.of(0, 1, 2)).error());
        }

        @Test
        void staleLeaderEpochIsFencedAndANewerOneIsUnknown() {
            assertEquals(Errors.FENCED_LEADER_EPOCH, alter(0, 2, 7, List.of(0, 1, 2)).error());
            assertEquals(Errors.UNKNOWN_LEADER_EPOCH, alter(0, 4, 7, List.of(0, 1, 2)).error());
        }

        @Test
        void stalePartitionEpochIsAnInvalidUpdateVersion() {
            AlterResult r = alter(0, 3, 6, List.of(0, 1, 2));
            assertEquals(Errors.INVALID_UPDATE_VERSION, r.error());
            assertEquals(Optional.empty(), r.newState());
        }

        @Test
        void theLeaderMustStayInTheIsr() {
            assertEquals(Errors.INVALID_REQUEST, alter(0, 3, 7, List.of(1)).error());
        }

        @Test
        void newMembersMustBeLiveReplicas() {
            assertEquals(Errors.INELIGIBLE_REPLICA, alter(0, 3, 7, List.of(0, 1, 5)).error(), "not a replica");
            AlterResult dead = PartitionChanges.alterIsr(current, REPLICAS, Set.of(0, 1), 0, 3, 7, List.of(0, 1, 2));
            assertEquals(Errors.INELIGIBLE_REPLICA, dead.error(), "not alive (or shutting down: the controller "
                    + "passes live brokers that are not shutting down)");
            assertTrue(dead.newState().isEmpty());
        }
    }
}
