package io.twinlog.testkit;

import io.twinlog.server.BrokerServer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a replica's whole log straight from a broker's storage, batch by batch, so tests can compare replicas:
 * after replication settles every replica must hold the same batches (offsets, leader epochs, CRCs).
 */
public final class ReplicaLogs {
    private ReplicaLogs() {
    }

    /** One batch as stored: enough to tell two replicas apart. */
    public record Batch(long baseOffset, long lastOffset, int partitionLeaderEpoch, long crc, long producerId,
                        int baseSequence, boolean transactional, boolean control, List<String> values,
                        List<StoredRecord> records) {
    }

    /** One record of a batch: its offset, timestamp, key and value (UTF-8, null if absent). */
    public record StoredRecord(long offset, long timestamp, String key, String value) {
    }

    /** Every batch of the replica of {@code tp} on {@code broker}, from its log start to its log end. */
    public static List<Batch> read(BrokerServer broker, TopicPartition tp) throws Exception {
        UnifiedLog log = broker.logStore().log(tp).orElseThrow(() ->
                new AssertionError("Broker " + broker.brokerId() + " has no log for " + tp));
        List<Batch> out = new ArrayList<>();
        long offset = log.logStartOffset();
        while (offset < log.logEndOffset()) {
            FetchDataInfo info = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
            long next = offset;
            for (RecordBatch b : info.records.batches()) {
                List<String> values = new ArrayList<>();
                List<StoredRecord> records = new ArrayList<>();
                for (Record r : b) {
                    String value = r.hasValue() ? utf8(r.value()) : null;
                    values.add(value);
                    records.add(new StoredRecord(r.offset(), r.timestamp(), r.hasKey() ? utf8(r.key()) : null, value));
                }
                out.add(new Batch(b.baseOffset(), b.lastOffset(), b.partitionLeaderEpoch(), b.checksum(),
                        b.producerId(), b.baseSequence(), b.isTransactional(), b.isControlBatch(), values, records));
                next = b.lastOffset() + 1;
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return out;
    }

    /** Log end offset of every running broker's replica of {@code tp}, by broker id. */
    public static Map<Integer, Long> logEndOffsets(TestCluster cluster, TopicPartition tp) {
        Map<Integer, Long> out = new TreeMap<>();
        for (Integer id : cluster.runningBrokerIds()) {
            cluster.broker(id).logStore().log(tp).ifPresent(l -> out.put(id, l.logEndOffset()));
        }
        return out;
    }

    /**
     * Waits until every running broker in {@code replicas} holds a byte-identical log of {@code tp} (same batches,
     * same CRCs) and returns it.
     */
    public static List<Batch> awaitIdentical(TestCluster cluster, TopicPartition tp, List<Integer> replicas) {
        return Waits.waitFor("replicas " + replicas + " of " + tp + " to hold identical logs", () -> {
            Map<Integer, List<Batch>> logs = new TreeMap<>();
            for (Integer id : replicas) {
                logs.put(id, read(cluster.broker(id), tp));
            }
            return logs;
        }, logs -> logs.values().stream().distinct().count() == 1).values().iterator().next();
    }

    private static String utf8(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
