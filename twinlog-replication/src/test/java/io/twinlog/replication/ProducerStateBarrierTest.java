package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The producer-state barrier on a real log: recognised, appended by a leader, applied by a follower in the middle
 * of a fetched chunk, and applied again after a restart whose recovery replayed across it.
 */
@Timeout(60)
class ProducerStateBarrierTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int LOCAL = 1;
    private static final int LEADER = 2;

    @TempDir
    File dataDir;
    private TestLogs logs;

    @BeforeEach
    void openLogs() {
        logs = new TestLogs(dataDir);
    }

    @AfterEach
    void close() throws Exception {
        logs.close();
    }

    @Test
    void recognisesOnlyTheBarrier() {
        RecordBatch barrier = ProducerStateBarrier.create(1_000L).batches().iterator().next();
        assertTrue(barrier.isControlBatch());
        assertFalse(barrier.hasProducerId());
        assertTrue(ProducerStateBarrier.isBarrier(barrier));
        barrier.ensureValid(); // a valid CRC: it is copied byte for byte by replicas and mirrors
        RecordBatch data = idempotentAt(0L, 7L, 0, "x").batches().iterator().next();
        assertFalse(ProducerStateBarrier.isBarrier(data));
    }

    @Test
    void aLeaderAppendsTheBarrierAndForgetsEveryProducer() throws Exception {
        Partition partition = partition(openLog(true), LOCAL);
        partition.applyLeadership(LEADER, 0, 0, List.of(LEADER, LOCAL), List.of(LEADER, LOCAL), 0L);
        partition.appendRecordsAsFollower(idempotentAt(0L, 0L, 0, "source-0"), 0L); // copied from another cluster
        partition.applyLeadership(LOCAL, 1, 1, List.of(LEADER, LOCAL), List.of(LEADER, LOCAL), 0L);
        assertEquals(1, partition.log().producerStateManager().activeProducers().size());

        long barrier = partition.appendProducerStateBarrier(2_000L);

        assertEquals(1L, barrier);
        assertEquals(2L, partition.log().logEndOffset(), "the barrier takes one offset");
        assertTrue(partition.log().producerStateManager().activeProducers().isEmpty());
        assertEquals(0L, partition.log().highWatermark(), "the barrier is not committed before broker 2 has it");
        // producer id 0 of this cluster starts at sequence 0 and is appended, not answered as a duplicate
        var info = partition.appendRecordsToLeader(idempotentAt(0L, 0L, 0, "local-0"), (short) 1);
        assertEquals(2L, info.firstOffset());
    }

    @Test
    void aFollowerAppliesTheBarrierBetweenTheBatchesOfOneFetch() throws Exception {
        Partition partition = partition(openLog(true), LOCAL);
        partition.applyLeadership(LEADER, 5, 0, List.of(LEADER, LOCAL), List.of(LEADER, LOCAL), 0L);
        // one chunk: a source producer 0 (sequence 0..1), the barrier, then this cluster's producer 0 (sequence 0)
        MemoryRecords chunk = concat(idempotentAt(0L, 0L, 0, "source-0", "source-1"),
                barrierAt(2L), idempotentAt(3L, 0L, 0, "local-0"));

        partition.appendRecordsAsFollower(chunk, 0L);

        assertEquals(4L, partition.log().logEndOffset());
        var entry = partition.log().producerStateManager().activeProducers().get(0L);
        assertEquals(3L, entry.firstDataOffset(), "only the batch after the barrier is known for producer 0");
        assertEquals(3L, entry.lastDataOffset());
        assertEquals(0L, partition.log().highWatermark(), "applying the barrier does not move the high watermark");
        assertEquals(OptionalLong.of(2L), partition.latestProducerStateBarrier());
    }

    @Test
    void aRestartWhoseRecoveryReplayedAcrossTheBarrierAppliesItAgain() throws Exception {
        UnifiedLog log = followerWithBarrierAt2();
        log.flush(true);
        log.close();
        logs.closed(log);
        // a crash before the reset's snapshot was durable: no snapshot left, Kafka replays the whole log
        for (File f : log.dir().listFiles((d, name) -> name.endsWith(".snapshot"))) {
            Files.delete(f.toPath());
        }
        UnifiedLog reopened = openLog(false);
        assertTrue(reopened.producerStateManager().activeProducers().containsKey(0L),
                "Kafka's recovery knows nothing of the barrier and replays the source's producer");

        Partition again = partition(reopened, LOCAL);
        again.recoverProducerStateBarrier(true);

        assertEquals(Map.of(9L, 3L), Map.of(9L, reopened.producerStateManager().activeProducers().get(9L)
                .firstDataOffset()), "this cluster's producer after the barrier is kept");
        assertFalse(reopened.producerStateManager().activeProducers().containsKey(0L),
                "the source's producer before the barrier is forgotten again");
    }

    @Test
    void aCleanRestartReloadsTheStateSnapshottedAtCloseAndReadsNothing() throws Exception {
        UnifiedLog log = followerWithBarrierAt2();
        log.close(); // a clean close snapshots the producer state at the log end, barrier applied
        logs.closed(log);

        UnifiedLog reopened = openLog(true);
        Partition again = partition(reopened, LOCAL);
        again.recoverProducerStateBarrier(false);

        assertEquals(Set.of(9L), reopened.producerStateManager().activeProducers().keySet());
        assertEquals(OptionalLong.empty(), again.latestProducerStateBarrier(),
                "not looked for: a leader still failing over writes another barrier, which forgets nothing more");
    }

    /** A follower's log: source producer 0 at 0..1, the barrier at 2, this cluster's producer 9 at 3. */
    private UnifiedLog followerWithBarrierAt2() throws IOException {
        UnifiedLog log = openLog(true);
        Partition partition = partition(log, LOCAL);
        partition.applyLeadership(LEADER, 5, 0, List.of(LEADER, LOCAL), List.of(LEADER, LOCAL), 0L);
        partition.appendRecordsAsFollower(concat(idempotentAt(0L, 0L, 0, "source-0", "source-1"), barrierAt(2L),
                idempotentAt(3L, 9L, 0, "local-9")), 0L);
        return log;
    }

    private Partition partition(UnifiedLog log, int brokerId) {
        return new Partition(TP, TOPIC_ID, brokerId, log);
    }

    private UnifiedLog openLog(boolean cleanShutdown) throws IOException {
        return logs.open(TP, TOPIC_ID, cleanShutdown);
    }

    private static MemoryRecords idempotentAt(long baseOffset, long producerId, int baseSequence, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), values[i].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withIdempotentRecords(RecordBatch.CURRENT_MAGIC_VALUE, baseOffset, Compression.NONE,
                producerId, (short) 0, baseSequence, 0, records);
    }

    private static MemoryRecords barrierAt(long offset) {
        MemoryRecords barrier = ProducerStateBarrier.create(1_500L);
        var batch = barrier.batches().iterator().next();
        batch.setLastOffset(offset); // base offset = last offset for a one-record batch
        batch.setPartitionLeaderEpoch(5);
        return barrier;
    }

    private static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords p : parts) {
            size += p.sizeInBytes();
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        for (MemoryRecords p : parts) {
            all.put(p.buffer());
        }
        all.flip();
        return MemoryRecords.readableRecords(all);
    }
}
