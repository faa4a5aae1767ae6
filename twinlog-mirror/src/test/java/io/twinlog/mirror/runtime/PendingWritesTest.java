package io.twinlog.mirror.runtime;

import com.yammer.metrics.core.Meter;
import com.yammer.metrics.core.MetricName;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.mirror.partition.MirrorDecision;
import io.twinlog.mirror.partition.MirrorTimers;
import io.twinlog.mirror.partition.VersionedRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.twinlog.common.mirror.MirrorPartitionState.MIRRORING;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPED;
import static io.twinlog.common.mirror.MirrorPartitionState.STOPPING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writes deferred to the end of a pass: the version each decision is driven by, a partition's two decisions
 * joined into one write, what a refused or unwritten record does, and what is counted once written.
 */
@Timeout(30)
class PendingWritesTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final TopicPartition TP2 = new TopicPartition("orders", 1);

    private final BrokerMetrics broker = BrokerMetrics.unreported(0, Time.SYSTEM);
    private final MirrorMetrics metrics = new MirrorMetrics(broker, Time.SYSTEM);
    private final ScriptedRecords records = new ScriptedRecords();
    private final List<TopicPartition> refused = new ArrayList<>();
    private final PendingWrites writes = new PendingWrites("m", records, metrics, refused::add);
    private final MirrorLocalPartition partition = new FakeMirrorBroker().new Partition();

    @AfterEach
    void close() {
        metrics.close();
        broker.close();
    }

    @Test
    void deferReturnsTheVersionTheRecordWillHave() {
        MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5);
        assertEquals(0, writes.defer(TP, partition, new VersionedRecord(MirrorPartitionRecord.initial(5), -1),
                change(mirroring, "new"), false), "a record not yet stored gets version 0");
        assertEquals(4, writes.defer(TP2, partition, new VersionedRecord(mirroring, 3),
                change(mirroring.transitionTo(STOPPING, 5), "stop"), false), "a state change: one more");
        assertTrue(writes.holds(TP));
        assertTrue(writes.holds(TP2));
        assertFalse(writes.holds(new TopicPartition("orders", 2)));

        PendingWrites other = new PendingWrites("m", records, metrics, refused::add);
        assertEquals(3, other.defer(TP, partition, new VersionedRecord(mirroring, 3), progressOnly(mirroring, 10),
                false), "a progress-only write keeps its version");
        assertEquals(0, other.defer(TP2, partition, new VersionedRecord(MirrorPartitionRecord.initial(5), -1),
                progressOnly(MirrorPartitionRecord.initial(5), 10), false), "unless the record does not exist yet");
    }

    @Test
    void aSecondDecisionOfThePassJoinsTheFirstWrite() {
        MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5);
        MirrorPartitionRecord stopping = mirroring.transitionTo(STOPPING, 5);
        MirrorPartitionRecord stopped = stopping.transitionTo(STOPPED, 5);
        assertEquals(8, writes.defer(TP, partition, new VersionedRecord(mirroring, 7), change(stopping, "stop"),
                false));
        // the second decision starts from what the first will have written; the write still expects version 7
        assertEquals(8, writes.defer(TP, partition, new VersionedRecord(stopping, 8), change(stopped, "caught up"),
                true));
        records.outcomes.add(List.of(8));

        assertEquals(Set.of(TP), writes.flush());
        assertEquals(1, records.stateCalls.size());
        MirrorStateWriter.StateWrite only = records.stateCalls.get(0).get(0);
        assertEquals(new MirrorStateWriter.StateWrite(TP, stopped, 7), only);
        assertFalse(writes.holds(TP), "flushed");
        // counted from the stored state (MIRRORING -> STOPPED is no failover); the failback flag joins too
        assertEquals(0, count("Failovers"));
        assertEquals(1, count("Failbacks"));
    }

    @Test
    void aWrittenFailoverIsCountedAndItsProgressRecorded() {
        MirrorPartitionRecord stopping = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5)
                .transitionTo(STOPPING, 5);
        MirrorPartitionRecord stopped = withProgress(stopping.transitionTo(STOPPED, 5), 40);
        writes.defer(TP, partition, new VersionedRecord(stopping, 2), change(stopped, "caught up"), false);
        // a progress-only write of an existing record is no state write, only progress
        MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5);
        writes.defer(TP2, partition, new VersionedRecord(mirroring, 4), progressOnly(mirroring, 99), false);
        records.outcomes.add(List.of(3));

        assertEquals(Set.of(TP), writes.flush());
        assertEquals(List.of(new MirrorStateWriter.StateWrite(TP, stopped, 2)), records.stateCalls.get(0));
        assertEquals(Map.of(TP, new MirrorProgress(40, 40), TP2, new MirrorProgress(99, 99)),
                records.progressCalls.get(0));
        assertEquals(1, count("Failovers"));
        assertEquals(0, count("Failbacks"));
        assertEquals(List.of(), refused);
        assertEquals(Set.of(), writes.flush(), "nothing deferred: nothing written");
        assertEquals(1, records.stateCalls.size());
    }

    @Test
    void aRefusedOrUnwrittenRecordMakesItsDriverReReadAndWritesNoProgress() {
        MirrorPartitionRecord stopping = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5)
                .transitionTo(STOPPING, 5);
        TopicPartition tp3 = new TopicPartition("orders", 2);
        writes.defer(TP, partition, new VersionedRecord(stopping, 2),
                change(withProgress(stopping.transitionTo(STOPPED, 5), 40), "a"), true);
        writes.defer(TP2, partition, new VersionedRecord(stopping, 2),
                change(withProgress(stopping.transitionTo(STOPPED, 5), 50), "b"), true);
        writes.defer(tp3, partition, new VersionedRecord(stopping, 2),
                change(withProgress(stopping.transitionTo(STOPPED, 5), 60), "c"), false);
        records.outcomes.add(List.of(MirrorStateWriter.CHANGED, 3, MirrorStateWriter.NOT_WRITTEN));
        records.failure = Optional.of(new IllegalStateException("ZooKeeper lost"));

        assertEquals(Set.of(TP2), writes.flush());
        assertEquals(List.of(TP, tp3), refused);
        assertEquals(Map.of(TP2, new MirrorProgress(50, 50)), records.progressCalls.get(0));
        assertEquals(1, count("Failovers"), "only the written one");
        assertEquals(1, count("Failbacks"), "only the written one");
    }

    @Test
    void aProgressFailureDoesNotUndoTheStateWrites() {
        MirrorPartitionRecord mirroring = MirrorPartitionRecord.initial(5).transitionTo(MIRRORING, 5);
        writes.defer(TP, partition, new VersionedRecord(mirroring, 0),
                change(withProgress(mirroring.transitionTo(STOPPING, 5), 7), "stop"), false);
        records.outcomes.add(List.of(1));
        records.progressFails = true;

        assertEquals(Set.of(TP), writes.flush());
        assertEquals(List.of(), refused);
    }

    private static MirrorDecision change(MirrorPartitionRecord to, String reason) {
        return new MirrorDecision(List.of(), Optional.of(to), reason, false, MirrorTimers.NONE);
    }

    private static MirrorDecision progressOnly(MirrorPartitionRecord from, long offset) {
        return new MirrorDecision(List.of(), Optional.of(withProgress(from, offset)), "", true, MirrorTimers.NONE);
    }

    private static MirrorPartitionRecord withProgress(MirrorPartitionRecord r, long offset) {
        return new MirrorPartitionRecord(r.state(), r.writerLeaderEpoch(), r.minLeaderEpoch(), r.lastMirroredEpoch(),
                r.lastMirroredOffset(), r.retryAttempt(), r.lastError(), r.previousState(),
                new MirrorProgress(offset, offset), r.truncation(), r.reconcileRequests());
    }

    /** The mirror's meter's count; 0 when the mirror has no metrics yet. */
    private long count(String name) {
        MetricName metricName = broker.group("kafka.server", "ClusterMirror").metricName(name, Map.of("mirror", "m"));
        Meter meter = (Meter) broker.registry().allMetrics().get(metricName);
        return meter == null ? 0 : meter.count();
    }

    /** Records every call; answers state writes with the scripted outcomes. */
    private static final class ScriptedRecords implements MirrorRecords {
        final Deque<List<Integer>> outcomes = new ArrayDeque<>();
        final List<List<MirrorStateWriter.StateWrite>> stateCalls = new ArrayList<>();
        final List<Map<TopicPartition, MirrorProgress>> progressCalls = new ArrayList<>();
        Optional<Exception> failure = Optional.empty();
        boolean progressFails;

        @Override
        public Optional<MirrorDefinition> definition(String name) {
            return Optional.empty();
        }

        @Override
        public boolean updateDefinition(MirrorDefinition expected, MirrorDefinition next) {
            return false;
        }

        @Override
        public MirrorStateWriter.Outcome writeStates(List<MirrorStateWriter.StateWrite> writes) {
            stateCalls.add(List.copyOf(writes));
            return new MirrorStateWriter.Outcome(outcomes.isEmpty() ? List.of() : outcomes.poll(), failure);
        }

        @Override
        public void writeProgress(Map<TopicPartition, MirrorProgress> progress) throws Exception {
            progressCalls.add(new LinkedHashMap<>(progress));
            if (progressFails) {
                throw new IllegalStateException("progress not written");
            }
        }
    }
}
