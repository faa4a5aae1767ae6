package io.twinlog.mirror.sim;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.VersionedRecord;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One simulated cluster holding one partition on {@value #REPLICAS} brokers: leader, leader epoch, ISR and high
 * watermark as its controller and replication keep them, Kafka's way (followers truncate by epoch, the high
 * watermark is the lowest log end in the ISR, clean elections pick an ISR member). It may also be the destination
 * of one mirror: the partition's durable mirror record, the operator's desired state, and the leader's driver.
 */
final class SimCluster {
    static final int REPLICAS = 3;

    final String name;
    final List<SimLog> logs = new ArrayList<>();
    final boolean[] alive = new boolean[REPLICAS];
    /** A mirror leader cut its log and not every replica has followed yet. */
    boolean cutUnreplicated;
    /**
     * This mirror partition met what issue 12 fixes: leadership moved while a cut was not yet on every replica (only
     * the leader truncates for mirroring, so the new leader may hold the cut tail), or the cut itself kept records
     * the source does not have (the last mirrored epoch's number meant another history on this cluster). Its log is
     * not checked against the source for the rest of the run.
     */
    boolean issue12Gap;
    /** Replicas that have not yet followed their mirror leader's last cut. */
    final boolean[] pendingCut = new boolean[REPLICAS];
    /** Replicas that were down when a mirror leader cut its log, or went down before following it. */
    final boolean[] missedLeaderCut = new boolean[REPLICAS];
    /** When each follower last had the leader's log end (for ISR shrinking). */
    final long[] caughtUpMs = new long[REPLICAS];
    int leader = 0;
    int leaderEpoch = 0;
    Set<Integer> isr = new LinkedHashSet<>(List.of(0, 1, 2));
    long highWatermark = 0;
    boolean controllerUp = true;
    /** Epochs this cluster's leaders have had, in order: they never go down. */
    int highestEpochSeen = 0;

    // --- this cluster as a mirror destination ---
    /** The cluster it mirrors from, or null. */
    SimCluster mirrorSource;
    DesiredMirrorState desired;
    /** The durable record (ZooKeeper), or null before the first write. */
    VersionedRecord stored;
    /** The driver of the broker that leads the partition, and which broker that is. */
    MirrorPartitionDriver driver;
    int driverBroker = -1;
    boolean fetching;
    Long sourceHighWatermark;
    /** Set when the source had an unclean election while this cluster mirrored it: its prefix may diverge. */
    boolean sourceDiverged;
    /** Since when the mirror's source has had no leader (the fetcher reports it after the state timeout). */
    long sourceLeaderlessSinceMs = -1;

    SimCluster(String name) {
        this.name = name;
        for (int i = 0; i < REPLICAS; i++) {
            logs.add(new SimLog());
            alive[i] = true;
        }
    }

    boolean hasLeader() {
        return leader >= 0 && alive[leader];
    }

    SimLog leaderLog() {
        return logs.get(leader);
    }

    Optional<VersionedRecord> stored() {
        return Optional.ofNullable(stored);
    }

    /** Writable by clients: no mirror into it, or its mirror partition is failed over. */
    boolean writable() {
        return mirrorSource == null || (stored != null && stored.record().state().name().equals("STOPPED"));
    }

    /** A new leader: a clean election from the ISR, else (if allowed) any live replica; the epoch goes up. */
    boolean elect(boolean uncleanAllowed, long nowMs) {
        List<Integer> candidates = new ArrayList<>();
        for (int r : isr) {
            if (alive[r]) {
                candidates.add(r);
            }
        }
        boolean unclean = false;
        if (candidates.isEmpty() && uncleanAllowed) {
            for (int r = 0; r < REPLICAS; r++) {
                if (alive[r]) {
                    candidates.add(r);
                }
            }
            unclean = !candidates.isEmpty();
        }
        if (candidates.isEmpty()) {
            leader = -1;
            return false;
        }
        leader = candidates.get(0);
        bumpEpoch(leaderEpoch + 1);
        issue12Gap |= cutUnreplicated;
        if (unclean) {
            isr = new LinkedHashSet<>(List.of(leader));
            highWatermark = Math.min(highWatermark, leaderLog().logEnd());
        } else {
            isr.removeIf(r -> !alive[r]);
        }
        for (int r = 0; r < REPLICAS; r++) {
            caughtUpMs[r] = nowMs;
        }
        return unclean;
    }

    void bumpEpoch(int epoch) {
        if (epoch < leaderEpoch) {
            throw new IllegalStateException(name + ": leader epoch would go down from " + leaderEpoch + " to " + epoch);
        }
        leaderEpoch = epoch;
        highestEpochSeen = Math.max(highestEpochSeen, epoch);
    }

    /**
     * Every live follower fetches from the leader once: truncates where it diverges (the leader answers, as
     * Twinlog's does, with the end of the follower's last epoch in its own history, or with its latest epoch and log
     * end when that epoch is gone), then copies. Then the ISR and high watermark follow.
     */
    void replicate(long nowMs, long lagMaxMs) {
        if (!hasLeader()) {
            return;
        }
        SimLog leaderLog = leaderLog();
        for (int r = 0; r < REPLICAS; r++) {
            if (r == leader || !alive[r]) {
                continue;
            }
            SimLog follower = logs.get(r);
            for (int round = 0; round < 20 && follower.logEnd() > 0; round++) {
                // the leader's answer to the follower's last epoch (Twinlog's: with its latest epoch and log end,
                // or the asked epoch and its log end, when the asked one is above its history; decision 25)
                int lastEpoch = follower.latestEpoch();
                EpochHistory.EpochEnd answer = leaderLog.epochs().endOffsetFor(lastEpoch, leaderLog.logEnd())
                        .orElse(new EpochHistory.EpochEnd(leaderLog.latestEpoch() >= 0 ? leaderLog.latestEpoch()
                                : lastEpoch, leaderLog.logEnd()));
                if (answer.epoch() == lastEpoch && answer.endOffset() >= follower.logEnd()) {
                    break;
                }
                // Kafka's follower: where its own history ends the largest epoch at or below the answer's
                EpochHistory.EpochEnd own = follower.epochs().endOffsetFor(answer.epoch(), follower.logEnd())
                        .orElse(new EpochHistory.EpochEnd(answer.epoch(), 0));
                long to = own.epoch() != answer.epoch() ? Math.min(own.endOffset(), follower.logEnd())
                        : Math.min(Math.min(own.endOffset(), answer.endOffset()), follower.logEnd());
                if (to >= follower.logEnd()) {
                    throw new IllegalStateException(name + ": follower " + r + " cannot converge with its leader");
                }
                follower.truncateTo(to);
            }
            if (follower.logEnd() < leaderLog.logEnd()
                    && leaderLog.at(follower.logEnd()).epoch() < follower.latestEpoch()) {
                // its old tail passed the epoch comparison (the same numbers, another history): the known gap of
                // a replica that was down while its mirror leader cut the log (issue 12); it stays diverged
                if (!missedLeaderCut[r] && !issue12Gap) {
                    throw new IllegalStateException(name + ": follower " + r + " diverged from its leader unnoticed");
                }
                continue;
            }
            for (long o = follower.logEnd(); o < leaderLog.logEnd(); o++) {
                follower.append(leaderLog.at(o));
            }
            caughtUpMs[r] = nowMs;
            pendingCut[r] = false;
            if (follower.logEnd() >= highWatermark && follower.samePrefix(leaderLog, follower.logEnd())) {
                isr.add(r);
            }
        }
        boolean everyReplicaFollowed = true;
        for (int r = 0; r < REPLICAS; r++) {
            everyReplicaFollowed &= logs.get(r).logEnd() == leaderLog.logEnd()
                    && logs.get(r).samePrefix(leaderLog, leaderLog.logEnd());
        }
        if (everyReplicaFollowed) {
            cutUnreplicated = false;
        }
        isr.removeIf(r -> r != leader && (!alive[r] || nowMs - caughtUpMs[r] > lagMaxMs));
        isr.add(leader);
        long hw = leaderLog.logEnd();
        for (int r : isr) {
            hw = Math.min(hw, logs.get(r).logEnd());
        }
        highWatermark = Math.max(Math.min(highWatermark, leaderLog.logEnd()), hw);
    }

    /**
     * A leader that cut its log forgets what it knew of the followers: the high watermark counts only itself.
     * Replicas down at that moment are marked: when they come back, epoch comparison alone cannot always tell their
     * old tail from the re-mirrored log (the same epoch numbers mean different histories on the two clusters), the
     * gap issue 12's partition-wide truncation point closes.
     */
    void leaderTruncated() {
        highWatermark = Math.min(highWatermark, leaderLog().logEnd());
        cutUnreplicated = true;
        for (int r = 0; r < REPLICAS; r++) {
            pendingCut[r] = r != leader;
            if (!alive[r]) {
                missedLeaderCut[r] = true;
            }
        }
    }

    /** A broker goes down: if it had not followed its mirror leader's cut yet, it missed it. */
    void crash(int r) {
        alive[r] = false;
        if (pendingCut[r]) {
            missedLeaderCut[r] = true;
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(name + " leader " + leader + " epoch " + leaderEpoch + " isr " + isr
                + " hw " + highWatermark + (controllerUp ? "" : " controller-down"));
        if (mirrorSource != null) {
            sb.append(" mirror<-").append(mirrorSource.name).append(' ').append(desired).append(' ')
                    .append(stored == null ? "no-record" : stored.record().state() + " lme "
                            + stored.record().lastMirroredEpoch() + " lmo " + stored.record().lastMirroredOffset()
                            + " min " + stored.record().minLeaderEpoch());
        }
        for (int r = 0; r < REPLICAS; r++) {
            sb.append("\n    ").append(r).append(alive[r] ? " " : " (down) ").append(logs.get(r));
        }
        return sb.toString();
    }
}
