package io.twinlog.mirror.runtime;

import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.mirror.partition.FailbackDecision;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One mirror's state records decided in a pass, written together at its end: a pass over 1,000 starting partitions
 * writes their records in a few ZooKeeper transactions instead of one each (decision 94). Each record is written
 * conditionally on the version its decision was made from; a refused one makes its partition's driver forget what
 * it wrote ({@code onRefused}), so its next pass starts from the stored record. Transitions are logged and counted
 * (failovers; failbacks, {@link FailbackDecision}) once written. Manager thread only.
 */
final class PendingWrites {
    private static final Logger log = LoggerFactory.getLogger(MirrorWorker.class);

    private final String mirror;
    private final MirrorRecords records;
    private final MirrorMetrics metrics;
    private final Consumer<TopicPartition> onRefused;
    private final Map<TopicPartition, DeferredWrite> deferred = new LinkedHashMap<>();

    /**
     * A decision's record; {@code failback}: it records the truncation point of a failback
     * ({@link FailbackDecision}), counted once written.
     */
    private record DeferredWrite(TopicPartition tp, MirrorLocalPartition partition, VersionedRecord from,
                                 MirrorDecision decision, boolean failback) {
    }

    PendingWrites(String mirror, MirrorRecords records, MirrorMetrics metrics, Consumer<TopicPartition> onRefused) {
        this.mirror = mirror;
        this.records = records;
        this.metrics = metrics;
        this.onRefused = onRefused;
    }

    /** Whether a record of {@code tp} waits for the end of the pass. */
    boolean holds(TopicPartition tp) {
        return deferred.containsKey(tp);
    }

    /**
     * Defers a decision's record to the end of the pass; returns the version the record will have once written,
     * which the driver goes by. A progress-only decision keeps its version; a partition's second decision in a pass
     * joins its first write.
     */
    int defer(TopicPartition tp, MirrorLocalPartition partition, VersionedRecord from, MirrorDecision d,
              boolean failback) {
        DeferredWrite earlier = deferred.get(tp);
        DeferredWrite write;
        if (earlier == null) {
            write = new DeferredWrite(tp, partition, from, d, failback);
        } else {
            // a second decision of the same pass (STOPPING, then its last mirrored offset): one write of the last
            // record, from the version the first found
            MirrorDecision first = earlier.decision();
            String reason = first.reason().isEmpty() ? d.reason()
                    : d.reason().isEmpty() ? first.reason() : first.reason() + "; " + d.reason();
            write = new DeferredWrite(tp, partition, earlier.from(), new MirrorDecision(d.actions(), d.write(),
                    reason, first.progressOnly() && d.progressOnly(), d.timers()), earlier.failback() || failback);
        }
        deferred.put(tp, write);
        VersionedRecord base = write.from();
        if (write.decision().progressOnly() && base.version() >= 0) {
            return base.version();
        }
        return base.version() < 0 ? 0 : base.version() + 1;
    }

    /**
     * Writes the deferred records: state records version-checked, in a few ZooKeeper transactions; then progress.
     *
     * @return the partitions whose new state (not only progress) was written
     */
    Set<TopicPartition> flush() {
        if (deferred.isEmpty()) {
            return Set.of();
        }
        List<DeferredWrite> batch = new ArrayList<>(deferred.values());
        deferred.clear();
        List<DeferredWrite> stateWrites = new ArrayList<>();
        Map<TopicPartition, MirrorProgress> progress = new LinkedHashMap<>();
        for (DeferredWrite w : batch) {
            MirrorPartitionRecord to = w.decision().write().get();
            if (!(w.decision().progressOnly() && w.from().version() >= 0)) {
                stateWrites.add(w);
            }
            if (!to.progress().equals(w.from().record().progress()) || w.from().version() < 0
                    || w.decision().progressOnly()) {
                progress.put(w.tp(), to.progress());
            }
        }
        MirrorStateWriter.Outcome outcome = records.writeStates(stateWrites.stream().map(w ->
                new MirrorStateWriter.StateWrite(w.tp(), w.decision().write().get(), w.from().version())).toList());
        List<Integer> versions = outcome.versions();
        if (outcome.failure().isPresent()) {
            long notWritten = versions.stream().filter(v -> v == MirrorStateWriter.NOT_WRITTEN).count();
            log.warn("Could not write the state records of {} of {} mirror partitions (the others are written); they "
                    + "decide again at their next pass", notWritten, stateWrites.size(), outcome.failure().get());
        }
        Set<TopicPartition> written = new HashSet<>();
        for (int i = 0; i < stateWrites.size(); i++) {
            DeferredWrite w = stateWrites.get(i);
            if (versions.get(i) == MirrorStateWriter.NOT_WRITTEN) {
                onRefused.accept(w.tp());
                progress.remove(w.tp());
            } else if (versions.get(i) == MirrorStateWriter.CHANGED) {
                log.info("[Mirror {} {}] state record changed concurrently; re-reading", mirror, w.tp());
                onRefused.accept(w.tp());
                progress.remove(w.tp());
            } else {
                logTransition(w);
                if (!w.decision().progressOnly()) {
                    written.add(w.tp());
                    metrics.onTransition(mirror, w.from().record().state(), w.decision().write().get().state());
                }
                if (w.failback()) {
                    metrics.onFailback(mirror); // the source mirrored this log before: mirroring back
                }
            }
        }
        try {
            records.writeProgress(progress);
        } catch (Exception e) { // broad: any store failure only delays the progress shown; logged with its trace
            log.warn("Could not record the progress of {} mirror partitions", progress.size(), e);
        }
        return written;
    }

    private void logTransition(DeferredWrite w) {
        if (w.decision().progressOnly()) {
            return;
        }
        MirrorPartitionState fromState = w.from().record().state();
        MirrorPartitionRecord to = w.decision().write().get();
        if (fromState != to.state()) {
            log.info("[Mirror {} {}] {} -> {}: {} (leader epoch {}, log end offset {})", mirror, w.tp(),
                    fromState, to.state(), w.decision().reason(), w.partition().leaderEpoch(),
                    w.partition().logEndOffset());
        } else {
            log.info("[Mirror {} {}] {}: {}", mirror, w.tp(), to.state(), w.decision().reason());
        }
    }
}
