package io.twinlog.share.partition;

import io.twinlog.replication.Partition;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.storage.log.FetchPartitionData;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * A real Kafka log and Twinlog {@link Partition} on a temporary directory, led by this broker alone (so every append
 * is committed at once), with the reads a ShareFetch makes.
 */
final class ShareTestLog implements AutoCloseable {
    static final int BROKER = 1;

    final TopicIdPartition partition;
    final Partition replica;
    private final UnifiedLog log;
    private final KafkaScheduler scheduler = new KafkaScheduler(1, true, "share-test-");

    ShareTestLog(File dir, String topic, int leaderEpoch) throws IOException {
        scheduler.startup();
        partition = new TopicIdPartition(Uuid.randomUuid(), new TopicPartition(topic, 0));
        Properties props = new Properties();
        props.put("segment.bytes", String.valueOf(1 << 20));
        log = UnifiedLog.create(new File(dir, partition.topicPartition().toString()), new LogConfig(props), 0L, 0L,
                scheduler, new BrokerTopicStats(), Time.SYSTEM, 60_000, new ProducerStateManagerConfig(86_400_000,
                        false), 600_000, new LogDirFailureChannel(1), true, Optional.of(partition.topicId()));
        replica = new Partition(partition.topicPartition(), partition.topicId(), BROKER, log);
        replica.applyLeadership(BROKER, leaderEpoch, 0, List.of(BROKER), List.of(BROKER), 0L);
    }

    /** One batch of {@code count} records; returns its first offset. */
    long append(int count) throws IOException {
        return append(count, System.currentTimeMillis());
    }

    long append(int count, long timestamp) throws IOException {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(timestamp, null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return replica.appendRecordsToLeader(MemoryRecords.withRecords(Compression.NONE, records), (short) 1)
                .firstOffset();
    }

    long appendTransactional(long producerId, int sequence, int count) throws IOException {
        SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, ("t" + i).getBytes(StandardCharsets.UTF_8));
        }
        return replica.appendRecordsToLeader(MemoryRecords.withTransactionalRecords(Compression.NONE, producerId,
                (short) 0, sequence, records), (short) 1).firstOffset();
    }

    void endTransaction(long producerId, boolean commit) throws IOException {
        replica.appendTransactionMarker(MemoryRecords.withEndTransactionMarker(System.currentTimeMillis(), producerId,
                (short) 0, new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 0)),
                (short) 0);
    }

    void deleteRecordsBelow(long offset) {
        replica.deleteRecordsOnLeader(offset);
    }

    long logEndOffset() {
        return log.logEndOffset();
    }

    /** What ShareFetch reads from {@code offset} (read_committed reads carry the aborted transactions). */
    FetchPartitionData read(long offset, int maxBytes, FetchIsolation isolation) throws IOException {
        Partition.ReadResult result = replica.read(offset, Optional.empty(), Optional.empty(), maxBytes, isolation,
                true);
        return new FetchPartitionData(Errors.NONE, result.highWatermark(), result.logStartOffset(),
                result.info().records, Optional.empty(), OptionalLong.of(result.lastStableOffset()),
                result.info().abortedTransactions, OptionalInt.empty(), false);
    }

    @Override
    public void close() throws Exception {
        log.close();
        scheduler.shutdown();
    }
}
