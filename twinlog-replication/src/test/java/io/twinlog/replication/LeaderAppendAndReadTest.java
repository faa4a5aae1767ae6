package io.twinlog.replication;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LeaderAppender} and {@link LocalLogReader} over a real log led by this broker alone: an append answered
 * with its offsets, a partition not hosted answered with its error and nothing else held up, what was appended read
 * back up to the high watermark, a read of a partition not hosted answered with its error.
 */
@Timeout(60)
class LeaderAppendAndReadTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private static final TopicPartition ELSEWHERE = new TopicPartition("t", 1);
    private static final Uuid TOPIC_ID = Uuid.randomUuid();
    private static final int LOCAL = 0;

    @TempDir
    File dataDir;

    private static Partition hosted(Partition partition, TopicPartition tp) {
        if (!tp.equals(partition.topicPartition())) {
            throw new NotLeaderOrFollowerException("Broker " + LOCAL + " does not host " + tp);
        }
        return partition;
    }

    private static MemoryRecords records(String... values) {
        List<SimpleRecord> out = new ArrayList<>();
        for (String v : values) {
            out.add(new SimpleRecord(v.getBytes()));
        }
        return MemoryRecords.withRecords(Compression.NONE, out.toArray(new SimpleRecord[0]));
    }

    @Test
    void appendsAreAnsweredPerPartitionAndReadBack() throws Exception {
        try (TestLogs logs = new TestLogs(dataDir)) {
            UnifiedLog log = logs.open(TP, TOPIC_ID, true);
            Partition partition = new Partition(TP, TOPIC_ID, LOCAL, log);
            partition.applyLeadership(LOCAL, 1, 1, List.of(LOCAL), List.of(LOCAL), 0L);
            DelayedOperations delayed = new DelayedOperations(LOCAL);
            LeaderAppender appender = new LeaderAppender(null, tp -> hosted(partition, tp), delayed);
            TopicIdPartition here = new TopicIdPartition(TOPIC_ID, TP);
            TopicIdPartition notHere = new TopicIdPartition(TOPIC_ID, ELSEWHERE);
            Map<TopicIdPartition, MemoryRecords> entries = new LinkedHashMap<>();
            entries.put(here, records("a", "b", "c"));
            entries.put(notHere, records("x"));
            List<TopicIdPartition> told = new ArrayList<>();
            AtomicReference<Map<TopicIdPartition, AppendResult>> answer = new AtomicReference<>();
            appender.append(30_000, (short) 1, entries, (p, r) -> partition.appendRecordsToLeader(r, (short) 1),
                    (tip, result) -> told.add(tip), answer::set);

            assertEquals(List.of(here, notHere), told, "each local outcome told before the answer");
            AppendResult ok = answer.get().get(here);
            assertEquals(Errors.NONE, ok.error());
            assertEquals(0, ok.baseOffset());
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, answer.get().get(notHere).error());
            assertEquals(3, log.highWatermark(), "a leader alone in its ISR commits at once");

            LocalLogReader reader = new LocalLogReader(tp -> hosted(partition, tp), delayed, new IsrChangeSender() {
                @Override
                public void submit(Partition p, int leaderEpoch, int partitionEpoch, List<Integer> newIsr) {
                }
            }, Time.SYSTEM);
            LinkedHashMap<TopicIdPartition, FetchRequest.PartitionData> fetch = new LinkedHashMap<>();
            fetch.put(here, new FetchRequest.PartitionData(TOPIC_ID, 1, 0, 1 << 20, Optional.empty()));
            fetch.put(notHere, new FetchRequest.PartitionData(TOPIC_ID, 0, 0, 1 << 20, Optional.empty()));
            LocalLogReader.LocalReadResult read = reader.read(new FetchParams(-1, -1, 0, 1, 1 << 20,
                    FetchIsolation.HIGH_WATERMARK), fetch);

            assertTrue(read.anyError(), "one partition erred");
            FetchResponseData.PartitionData data = read.responses().get(here);
            assertEquals(Errors.NONE.code(), data.errorCode());
            assertEquals(3, data.highWatermark());
            assertEquals(List.of(0L, 1L, 2L), offsets((Records) data.records()), "the whole batch holding offset 1");
            assertEquals(read.bytesRead(), data.records().sizeInBytes());
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), read.responses().get(notHere).errorCode());
            delayed.shutdown();
        }
    }

    private static List<Long> offsets(Records records) {
        List<Long> out = new ArrayList<>();
        records.records().forEach(r -> out.add(r.offset()));
        return out;
    }
}
