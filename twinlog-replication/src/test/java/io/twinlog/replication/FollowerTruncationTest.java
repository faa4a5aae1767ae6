package io.twinlog.replication;

import org.apache.kafka.server.common.OffsetAndEpoch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where a follower truncates when its leader reports a diverging epoch: the single rule cases, then a seeded
 * randomized run of the whole exchange (leader's divergence check, follower's truncation, fetch) over generated
 * histories that diverge the way unclean elections make them diverge.
 */
@Timeout(60)
class FollowerTruncationTest {

    private static Optional<OffsetAndEpoch> local(int epoch, long endOffset) {
        return Optional.of(new OffsetAndEpoch(endOffset, epoch));
    }

    @Test
    void sameEpochTruncatesToWhereTheLeaderEndsIt() {
        assertEquals(100, FollowerTruncation.truncationOffset(3, 100, local(3, 120), 0, 120));
    }

    @Test
    void sameEpochEndingEarlierLocallyTruncatesNothing() {
        assertEquals(100, FollowerTruncation.truncationOffset(3, 120, local(3, 100), 0, 100));
    }

    @Test
    void olderLocalEpochTruncatesToWhereItEndsLocally() {
        // the follower never had epoch 3: its epoch 2 ends at 80, where its next epoch (unknown to the leader) began
        assertEquals(80, FollowerTruncation.truncationOffset(3, 100, local(2, 80), 0, 130));
    }

    @Test
    void olderLocalEpochNeverTruncatesPastTheLeadersEnd() {
        assertEquals(60, FollowerTruncation.truncationOffset(3, 60, local(2, 80), 0, 130));
    }

    @Test
    void unknownLeaderEpochOrNoLocalEpochTruncatesToTheLogStart() {
        assertEquals(15, FollowerTruncation.truncationOffset(-1, -1, Optional.empty(), 15, 130));
        assertEquals(15, FollowerTruncation.truncationOffset(3, 100, Optional.empty(), 15, 130));
        assertEquals(15, FollowerTruncation.truncationOffset(3, 100, local(-1, -1), 15, 130));
    }

    @Test
    void neverBelowTheLogStartNorAboveTheLogEnd() {
        assertEquals(20, FollowerTruncation.truncationOffset(3, 10, local(3, 50), 20, 50));
        assertEquals(50, FollowerTruncation.truncationOffset(3, 90, local(3, 90), 0, 50));
    }

    // ---- seeded simulation ----

    /**
     * A replica's log as the epoch of each offset, plus the leader-epoch cache Kafka derives from it (an epoch
     * entry may have no records yet: a leader assigns its epoch at its log end when it is elected).
     */
    private static final class ModelLog {
        final List<Integer> epochs = new ArrayList<>();
        final TreeMap<Integer, Long> cache = new TreeMap<>();

        void append(int epoch) {
            if (cache.isEmpty() || cache.lastKey() < epoch) {
                assignEpoch(epoch);
            }
            epochs.add(epoch);
        }

        void assignEpoch(int epoch) {
            // as LeaderEpochFileCache.assign: entries at or after the new start offset are replaced
            cache.entrySet().removeIf(e -> e.getValue() >= epochs.size() || e.getKey() >= epoch);
            cache.put(epoch, (long) epochs.size());
        }

        void truncateTo(long offset) {
            while (epochs.size() > offset) {
                epochs.remove(epochs.size() - 1);
            }
            cache.entrySet().removeIf(e -> e.getValue() >= offset);
            if (offset > 0 && (cache.isEmpty() || cache.lastKey() < epochs.get((int) offset - 1))) {
                // unreachable with well-formed histories: a record's epoch always has an entry at or below it
                throw new AssertionError("cache lost the epoch of the last record");
            }
        }

        long logEndOffset() {
            return epochs.size();
        }

        Optional<Integer> latestEpoch() {
            return cache.isEmpty() ? Optional.empty() : Optional.of(cache.lastKey());
        }

        /** LeaderEpochFileCache.endOffsetFor as UnifiedLog.endOffsetForEpoch exposes it. */
        Optional<OffsetAndEpoch> endOffsetForEpoch(int requested) {
            if (cache.isEmpty()) {
                return Optional.empty();
            }
            if (cache.lastKey() == requested) {
                return Optional.of(new OffsetAndEpoch(logEndOffset(), requested));
            }
            Map.Entry<Integer, Long> higher = cache.higherEntry(requested);
            if (higher == null) {
                return Optional.empty();
            }
            Map.Entry<Integer, Long> floor = cache.floorEntry(requested);
            if (floor == null) {
                return Optional.of(new OffsetAndEpoch(higher.getValue(), requested));
            }
            return Optional.of(new OffsetAndEpoch(higher.getValue(), floor.getKey()));
        }
    }

    static LongStream seeds() {
        long base = Long.getLong("twinlog.test.seed", System.nanoTime());
        return LongStream.range(0, 300).map(i -> base + i);
    }

    /**
     * Builds a leader and a follower sharing a prefix, then each continuing with its own epochs (and at most one
     * of them continuing the last common epoch: two replicas never hold different records in the same epoch), runs
     * fetch rounds as Partition.readForFollower and ReplicaFetcherThread do, and checks after every truncation
     * that nothing of the common prefix was removed, and at the end that the follower equals the leader.
     * The seeds differ per run; a failure names its seed, and {@code -Dtwinlog.test.seed=N} replays from N.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void followerConvergesToTheLeaderWithoutLosingTheCommonPrefix(long seed) {
        Random random = new Random(seed);
        String replay = "replay: -Dtwinlog.test.seed=" + seed;
        ModelLog leader = new ModelLog();
        ModelLog follower = new ModelLog();
        int epoch = 0;
        int prefixEpochs = random.nextInt(4);
        for (int e = 0; e < prefixEpochs; e++, epoch += 1 + random.nextInt(2)) {
            int n = random.nextInt(5);
            for (int i = 0; i < n; i++) {
                leader.append(epoch);
                follower.append(epoch);
            }
        }
        long common = leader.logEndOffset();
        int lastCommonEpoch = leader.latestEpoch().orElse(-1);
        if (lastCommonEpoch >= 0 && random.nextBoolean()) {
            ModelLog continues = random.nextBoolean() ? leader : follower;
            int n = 1 + random.nextInt(4);
            for (int i = 0; i < n; i++) {
                continues.append(lastCommonEpoch);
            }
        }
        // the two sides' later epochs are disjoint: an epoch number names one leader's history
        int next = epoch + 1;
        int followerEpochs = random.nextInt(4);
        int leaderEpochs = random.nextInt(4);
        while (followerEpochs + leaderEpochs > 0) {
            boolean toFollower = leaderEpochs == 0 || (followerEpochs > 0 && random.nextBoolean());
            ModelLog target = toFollower ? follower : leader;
            int n = random.nextInt(5);
            for (int i = 0; i < n; i++) {
                target.append(next);
            }
            if (n == 0) {
                target.assignEpoch(next);
            }
            if (toFollower) {
                followerEpochs--;
            } else {
                leaderEpochs--;
            }
            next += 1 + random.nextInt(2);
        }
        // the leader's current epoch is above everything either replica has seen
        leader.assignEpoch(next);

        for (int round = 0; round < 100; round++) {
            long fetchOffset = follower.logEndOffset();
            Optional<Integer> lastFetchedEpoch = follower.latestEpoch();
            if (lastFetchedEpoch.isPresent()) {
                Optional<OffsetAndEpoch> end = leader.endOffsetForEpoch(lastFetchedEpoch.get());
                boolean diverged = end.isEmpty() || end.get().epoch() != lastFetchedEpoch.get()
                        || end.get().offset() < fetchOffset;
                if (diverged) {
                    int divergingEpoch = end.map(OffsetAndEpoch::epoch).orElse(-1);
                    long divergingEnd = end.map(OffsetAndEpoch::offset).orElse(-1L);
                    long to = FollowerTruncation.truncationOffset(divergingEpoch, divergingEnd,
                            divergingEpoch < 0 ? Optional.empty() : follower.endOffsetForEpoch(divergingEpoch),
                            0, follower.logEndOffset());
                    assertTrue(to <= follower.logEndOffset(), replay);
                    assertTrue(to >= Math.min(common, follower.logEndOffset()),
                            "truncated to " + to + " below the common prefix " + common + "; " + replay);
                    // an intermediate step may leave divergent records (the follower's older epoch is checked on
                    // the next round); it must never remove records both logs share
                    follower.truncateTo(to);
                    continue;
                }
            }
            if (fetchOffset > leader.logEndOffset()) {
                throw new AssertionError("fetch past the leader's end without divergence; " + replay);
            }
            if (fetchOffset == leader.logEndOffset()) {
                assertEquals(leader.epochs, follower.epochs, replay);
                return;
            }
            long upTo = Math.min(leader.logEndOffset(), fetchOffset + 1 + random.nextInt(4));
            for (long o = fetchOffset; o < upTo; o++) {
                follower.append(leader.epochs.get((int) o));
            }
        }
        throw new AssertionError("no convergence within 100 rounds; leader " + leader.epochs + " follower "
                + follower.epochs + "; " + replay);
    }
}
