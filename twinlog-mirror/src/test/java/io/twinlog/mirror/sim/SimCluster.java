package io.twinlog.mirror.sim;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.mirror.partition.EpochHistory;
import io.twinlog.mirror.partition.MirrorPartitionDriver;
import io.twinlog.mirror.partition.VersionedRecord;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * One simulated cluster holding one partition on {@value #REPLICAS} brokers: leader, leader epoch, ISR and high
 * watermark as its controller and replication keep them, Kafka's way (followers truncate by epoch, the high
 * watermark is the lowest log end in the ISR, clean elections pick an ISR member). It may also be the destination
 * of one mirror: the partition's durable mirror record, the operator's desired state, and the leader's driver.
 */
public final class SimCluster {
    public static final int REPLICAS = 3;

    public final String name;
    public final List<SimLog> logs = new ArrayList<>();
    public final boolean[] alive = new boolean[REPLICAS];
    /**
     * This mirror partition met what issue 12's reconciliation (not built yet) fixes: the LME cut itself kept
     * records the source does not have (the last mirrored epoch's number meant another history on this cluster).
     * Its log is not checked against the source for the rest of the run.
     */
    public boolean issue12Gap;
    /**
     * Per replica, the id of the last mirror truncation point it applied (kept next to its log: survives a crash);
     * 0 for none. A replica applies the points it has not applied before it serves (decision 38).
     */
    public final long[] appliedTruncation = new long[REPLICAS];
    /** Per replica, the ids of every truncation point it applied, as its {@code truncation-point} file keeps them. */
    private final List<Set<Long>> appliedTruncationIds = new ArrayList<>();
    /** This topic's {@code mirror.support.unclean.leader.election}. */
    public boolean uncleanElectionSupport;
    /** When each follower last had the leader's log end (for ISR shrinking). */
    public final long[] caughtUpMs = new long[REPLICAS];
    public int leader = 0;
    public int leaderEpoch = 0;
    public Set<Integer> isr = new LinkedHashSet<>(List.of(0, 1, 2));
    public long highWatermark = 0;
    public boolean controllerUp = true;
    /** Epochs this cluster's leaders have had, in order: they never go down. */
    public int highestEpochSeen = 0;
    /** The ids of the batches this cluster's leaders wrote (its producers' and its barriers), not copied. */
    final Set<Long> written = new HashSet<>();

    // --- this cluster as a mirror destination ---
    /** The cluster it mirrors from, or null. */
    public SimCluster mirrorSource;
    public DesiredMirrorState desired;
    /** The durable record (ZooKeeper), or null before the first write. */
    public VersionedRecord stored;
    /** The driver of the broker that leads the partition, and which broker that is. */
    public MirrorPartitionDriver driver;
    public int driverBroker = -1;
    public boolean fetching;
    public Long sourceHighWatermark;
    /** Set when the source had an unclean election while this cluster mirrored it: its prefix may diverge. */
    public boolean sourceDiverged;
    /** Since when the mirror's source has had no leader (the fetcher reports it after the state timeout). */
    public long sourceLeaderlessSinceMs = -1;

    public SimCluster(String name) {
        this.name = name;
        for (int i = 0; i < REPLICAS; i++) {
            logs.add(new SimLog());
            alive[i] = true;
        }
    }

    public boolean hasLeader() {
        return leader >= 0 && alive[leader];
    }

    public SimLog leaderLog() {
        return logs.get(leader);
    }

    public Optional<VersionedRecord> stored() {
        return Optional.ofNullable(stored);
    }

    /** Writable by clients: no mirror into it, or its mirror partition is failed over. */
    public boolean writable() {
        return mirrorSource == null || (stored != null && stored.record().state().name().equals("STOPPED"));
    }

    /** A new leader: a clean election from the ISR, else (if allowed) any live replica; the epoch goes up. */
    public boolean elect(boolean uncleanAllowed, long nowMs) {
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
        applyTruncations(leader); // before it serves as leader
        bumpEpoch(leaderEpoch + 1);
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

    public void bumpEpoch(int epoch) {
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
    public void replicate(long nowMs, long lagMaxMs) {
        if (!hasLeader()) {
            return;
        }
        SimLog leaderLog = leaderLog();
        for (int r = 0; r < REPLICAS; r++) {
            if (r == leader || !alive[r]) {
                continue;
            }
            applyTruncations(r); // before it serves as follower
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
                // its old tail passed the epoch comparison (the same numbers, another history): the partition-wide
                // truncation point exists so that this cannot happen, except after a cut that was itself wrong
                if (!issue12Gap) {
                    throw new IllegalStateException(name + ": follower " + r + " diverged from its leader unnoticed");
                }
                continue;
            }
            for (long o = follower.logEnd(); o < leaderLog.logEnd(); o++) {
                follower.append(leaderLog.at(o));
            }
            caughtUpMs[r] = nowMs;
            if (follower.logEnd() >= highWatermark && follower.samePrefix(leaderLog, follower.logEnd())) {
                isr.add(r);
            }
        }
        isr.removeIf(r -> r != leader && (!alive[r] || nowMs - caughtUpMs[r] > lagMaxMs));
        isr.add(leader);
        long hw = leaderLog.logEnd();
        for (int r : isr) {
            hw = Math.min(hw, logs.get(r).logEnd());
        }
        highWatermark = Math.max(Math.min(highWatermark, leaderLog.logEnd()), hw);
    }

    /** A leader that cut its log forgets what it knew of the followers: the high watermark counts only itself. */
    public void leaderTruncated() {
        highWatermark = Math.min(highWatermark, leaderLog().logEnd());
    }

    /**
     * Replica {@code r} applies the truncation points of the partition's record it has not applied yet (the
     * broker's rule, {@code TruncationPoints#cutFor}): cut to the lowest of their offsets, then remember the latest.
     */
    public void applyTruncations(int r) {
        if (stored == null || stored.record().truncation().isNone()) {
            return;
        }
        TruncationPoints points = stored.record().truncation().toPoints("simulated");
        OptionalLong cut = points.cutFor(appliedIds(r));
        if (cut.isPresent()) {
            if (cut.getAsLong() < logs.get(r).logEnd()) {
                logs.get(r).truncateTo(cut.getAsLong());
            }
            points.toApply(appliedIds(r)).forEach(p -> truncationApplied(r, p.id()));
        }
    }

    /** Replica {@code r} applied the point {@code id} (the leader its own, before the record holds it). */
    public void truncationApplied(int r, long id) {
        appliedIds(r).add(id);
        appliedTruncation[r] = id;
    }

    private Set<Long> appliedIds(int r) {
        while (appliedTruncationIds.size() <= r) {
            appliedTruncationIds.add(new HashSet<>());
        }
        return appliedTruncationIds.get(r);
    }

    /** The replicas whose last applied truncation point is the record's latest. */
    public Map<Integer, Long> truncationsApplied() {
        Map<Integer, Long> out = new HashMap<>();
        for (int r = 0; r < REPLICAS; r++) {
            if (appliedTruncation[r] != 0) {
                out.put(r, appliedTruncation[r]);
            }
        }
        return out;
    }

    /** A broker goes down (its log and its applied truncation point stay on its disk). */
    public void crash(int r) {
        alive[r] = false;
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
