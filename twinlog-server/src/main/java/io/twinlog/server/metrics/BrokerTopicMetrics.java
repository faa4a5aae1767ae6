package io.twinlog.server.metrics;

import com.yammer.metrics.core.Meter;
import io.twinlog.common.metrics.BrokerMetrics;
import io.twinlog.common.metrics.MetricsGroup;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka's {@code kafka.server:type=BrokerTopicMetrics}, for every topic ({@code topic=...}) and for all topics (no
 * tag), with Kafka's meanings: records and bytes appended by producers (MessagesInPerSec, BytesInPerSec, counted
 * once the append succeeded), bytes sent to consumers (BytesOutPerSec; followers count as ReplicationBytesOutPerSec
 * instead, for all topics only), produce and fetch requests per partition (Total...RequestsPerSec) and those that
 * failed. As in Kafka, "failed" counts what Kafka's ReplicaManager counts: an error a client with stale metadata or
 * bad input gets (NOT_LEADER_OR_FOLLOWER, a record too large or corrupt, an offset out of range, ...) and a storage
 * error (counted by the log dir's own handling) are not failed requests, while NOT_ENOUGH_REPLICAS, a sequence or
 * epoch error, an invalid record or an unexpected error are. Only partitions of topics that exist are counted (a
 * client's unknown topic creates no meters); a partition refused by the authorizer is not counted at all. A write
 * refused because the topic is a mirror topic counts as failed. Produce outcomes are counted when the local append
 * is done, before acks=all waits for the ISR, as Kafka does. Records a mirror copies are counted by the mirror's
 * own metrics, not here.
 */
public final class BrokerTopicMetrics {
    /** Kafka's produce errors that are not failures of the broker (ReplicaManager.appendToLocalLog). */
    private static final Set<Errors> PRODUCE_NOT_FAILED = Set.of(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER,
            Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID, Errors.MESSAGE_TOO_LARGE,
            Errors.RECORD_LIST_TOO_LARGE, Errors.CORRUPT_MESSAGE, Errors.KAFKA_STORAGE_ERROR,
            Errors.INVALID_TOPIC_EXCEPTION);
    /** Kafka's fetch errors that are not failures of the broker (ReplicaManager.readFromLog). */
    private static final Set<Errors> FETCH_NOT_FAILED = Set.of(Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER,
            Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_LEADER_EPOCH,
            Errors.FENCED_LEADER_EPOCH, Errors.REPLICA_NOT_AVAILABLE, Errors.KAFKA_STORAGE_ERROR,
            Errors.INCONSISTENT_TOPIC_ID, Errors.OFFSET_OUT_OF_RANGE);
    private static final List<String> PER_TOPIC = List.of("MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec",
            "BytesRejectedPerSec", "TotalProduceRequestsPerSec", "TotalFetchRequestsPerSec",
            "FailedProduceRequestsPerSec", "FailedFetchRequestsPerSec");

    private final MetricsGroup group;
    private final Meters all;
    private final Meter replicationBytesOut;
    private final Map<String, Meters> topics = new ConcurrentHashMap<>();

    public BrokerTopicMetrics(BrokerMetrics metrics) {
        this.group = metrics.group("kafka.server", "BrokerTopicMetrics");
        this.all = new Meters(group, Map.of());
        this.replicationBytesOut = group.newMeter("ReplicationBytesOutPerSec", "bytes");
    }

    /** One set of meters: all topics' or one topic's. */
    private static final class Meters {
        final Meter messagesIn;
        final Meter bytesIn;
        final Meter bytesOut;
        final Meter bytesRejected;
        final Meter totalProduce;
        final Meter totalFetch;
        final Meter failedProduce;
        final Meter failedFetch;

        Meters(MetricsGroup group, Map<String, String> tags) {
            messagesIn = group.newMeter("MessagesInPerSec", "messages", tags);
            bytesIn = group.newMeter("BytesInPerSec", "bytes", tags);
            bytesOut = group.newMeter("BytesOutPerSec", "bytes", tags);
            bytesRejected = group.newMeter("BytesRejectedPerSec", "bytes", tags);
            totalProduce = group.newMeter("TotalProduceRequestsPerSec", "requests", tags);
            totalFetch = group.newMeter("TotalFetchRequestsPerSec", "requests", tags);
            failedProduce = group.newMeter("FailedProduceRequestsPerSec", "requests", tags);
            failedFetch = group.newMeter("FailedFetchRequestsPerSec", "requests", tags);
        }
    }

    private Meters topic(String topic) {
        return topics.computeIfAbsent(topic, t -> new Meters(group, Map.of("topic", t)));
    }

    /** The outcome of one partition of a produce request; {@code records} null if it never reached the log. */
    public void produced(String topic, Errors error, MemoryRecords records) {
        if (topic == null || topic.isEmpty() || error == Errors.TOPIC_AUTHORIZATION_FAILED) {
            return;
        }
        Meters t = topic(topic);
        t.totalProduce.mark();
        all.totalProduce.mark();
        if (error == Errors.NONE && records != null) {
            long messages = 0;
            for (MutableRecordBatch batch : records.batches()) {
                messages += batch.nextOffset() - batch.baseOffset();
            }
            t.messagesIn.mark(messages);
            all.messagesIn.mark(messages);
            t.bytesIn.mark(records.sizeInBytes());
            all.bytesIn.mark(records.sizeInBytes());
        } else if (!PRODUCE_NOT_FAILED.contains(error)) {
            t.failedProduce.mark();
            all.failedProduce.mark();
        } else if ((error == Errors.RECORD_LIST_TOO_LARGE || error == Errors.MESSAGE_TOO_LARGE) && records != null) {
            t.bytesRejected.mark(records.sizeInBytes());
            all.bytesRejected.mark(records.sizeInBytes());
        }
    }

    /** The outcome of one partition of a fetch: {@code bytes} of records sent. */
    public void fetched(String topic, boolean follower, Errors error, long bytes) {
        if (topic == null || topic.isEmpty() || error == Errors.TOPIC_AUTHORIZATION_FAILED) {
            return;
        }
        Meters t = topic(topic);
        t.totalFetch.mark();
        all.totalFetch.mark();
        if (!FETCH_NOT_FAILED.contains(error)) {
            t.failedFetch.mark();
            all.failedFetch.mark();
        }
        if (bytes > 0) {
            if (follower) {
                replicationBytesOut.mark(bytes);
            } else {
                t.bytesOut.mark(bytes);
                all.bytesOut.mark(bytes);
            }
        }
    }

    /** The topic is gone from the cluster: its meters go too (Kafka does the same on deletion). */
    public void removeTopic(String topic) {
        if (topics.remove(topic) != null) {
            PER_TOPIC.forEach(name -> group.removeMetric(name, Map.of("topic", topic)));
        }
    }
}
