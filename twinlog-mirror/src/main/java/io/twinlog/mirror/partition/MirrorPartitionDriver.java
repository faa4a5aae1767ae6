package io.twinlog.mirror.partition;

import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.common.mirror.PointInTimeStop;
import io.twinlog.mirror.store.MirrorPartitionRecord;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * Runs the state machine for one partition its broker leads, one pass at a time, keeping what the partition's leader
 * remembers between passes (the last record it wrote, the machine's clocks). Created when the broker becomes the
 * partition's leader and dropped when it stops being it, so a new leader starts from the durable record alone.
 *
 * <p>A pass: each decision's actions run in order, then its record is written; a decision whose actions changed the
 * partition (a cut, a barrier) or brought the peer's answer is followed by another on a fresh view, up to
 * {@value #MAX_DECISIONS_PER_PASS} (a guard, not a rule). The broker and the simulation run this same loop.
 */
public final class MirrorPartitionDriver {
    static final int MAX_DECISIONS_PER_PASS = 8;

    private final MirrorPartitionMachine machine;
    private VersionedRecord written;
    private MirrorTimers timers = MirrorTimers.NONE;

    public MirrorPartitionDriver(MirrorPartitionMachine machine) {
        this.machine = machine;
    }

    /**
     * Forgets this leader's last write: a write its host deferred and then found refused (the record changed
     * meanwhile); the next pass starts from the stored record.
     */
    public void forgetWritten() {
        written = null;
    }

    /** The record this leader goes by: its own last write, unless the stored one is newer. */
    public VersionedRecord current(MirrorPartitionHost host, int localLeaderEpoch) {
        Optional<VersionedRecord> stored = host.stored();
        if (written != null && (stored.isEmpty() || written.version() >= stored.get().version())) {
            return written;
        }
        return stored.orElseGet(() -> new VersionedRecord(MirrorPartitionRecord.initial(localLeaderEpoch), -1));
    }

    /**
     * One pass.
     *
     * @return false if it stopped early (the record changed concurrently, or the guard was reached)
     */
    public boolean pass(MirrorPartitionHost host, DesiredMirrorState desired, MirrorEvent event,
                        Optional<SourceProblem> sourceProblem, OptionalLong sourceHighWatermark, long nowMs)
            throws Exception {
        return pass(host, desired, event, sourceProblem, sourceHighWatermark, Optional.empty(), nowMs);
    }

    /** One pass, with the leader's newest mirrored timestamp and mirrored-up-to time ({@link MirroredTime}). */
    public boolean pass(MirrorPartitionHost host, DesiredMirrorState desired, MirrorEvent event,
                        Optional<SourceProblem> sourceProblem, OptionalLong sourceHighWatermark,
                        Optional<MirroredTime> mirroredTime, long nowMs) throws Exception {
        return pass(host, desired, event, sourceProblem, sourceHighWatermark, mirroredTime, nowMs, Optional.empty());
    }

    /**
     * One pass, of a failover to a point in time when {@code stopAt} is given: each decision is given where the time
     * cuts the log as it is then (a cut earlier in the pass moved its end), and the mirrored-up-to time (a fetch after
     * the time that found the partition caught up means it has reached it).
     */
    public boolean pass(MirrorPartitionHost host, DesiredMirrorState desired, MirrorEvent event,
                        Optional<SourceProblem> sourceProblem, OptionalLong sourceHighWatermark,
                        Optional<MirroredTime> mirroredTime, long nowMs, Optional<PointInTimeStop> stopAt)
            throws Exception {
        PeerLookup peer = PeerLookup.NOT_ASKED;
        MirrorEvent next = event;
        for (int i = 0; i < MAX_DECISIONS_PER_PASS; i++) {
            PartitionView view = host.view();
            VersionedRecord from = current(host, view.leaderEpoch());
            Optional<PointInTimeView> pointInTime = Optional.empty();
            // read only while the failover runs: a failed-over partition keeps its desired state (and the time) for good
            if (stopAt.isPresent() && desired == DesiredMirrorState.STOPPED
                    && from.record().state() != MirrorPartitionState.STOPPED) {
                pointInTime = Optional.of(new PointInTimeView(stopAt.get(), host.timeCut(stopAt.get().atMs()),
                        mirroredTime.map(MirroredTime::mirroredUpToMs).orElse(-1L)));
            }
            MirrorDecision d = machine.decide(new MirrorInput(from.record(), view, desired, next, peer,
                    sourceProblem, sourceHighWatermark, timers, nowMs, mirroredTime, pointInTime));
            timers = d.timers();
            for (MirrorAction action : d.actions()) {
                peer = host.execute(action, peer);
            }
            if (d.write().isPresent()) {
                int version = host.write(from, d);
                if (version < 0) {
                    written = null; // changed concurrently: read again on the next pass
                    return false;
                }
                written = new VersionedRecord(d.write().get(), version);
            }
            if (!d.decideAgain()) {
                return true;
            }
            next = MirrorEvent.TICK; // a fetcher's report is consumed by the first decision
        }
        return false;
    }
}
