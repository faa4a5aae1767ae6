package io.twinlog.mirror.runtime;

import io.twinlog.mirror.partition.MirroredTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One mirror worker's newest mirrored timestamp and mirrored-up-to time of each partition it leads
 * ({@link MirroredTime}, decision 122): known from the log's last batch when the broker takes the partition (or it
 * returns to MIRRORING after a cut), then moved by each fetch answer; handed to the state machine, which records it
 * with the progress, and to the partition's RPO gauge.
 *
 * <p>Threading: seeded and dropped on the manager's thread; a fetch thread moves a partition's entry (only one
 * that was seeded: a late answer for a partition forgotten meanwhile leaves nothing behind).
 */
final class MirroredTimes {
    private static final Logger log = LoggerFactory.getLogger(MirroredTimes.class);

    private final String mirror;
    private final MirrorMetrics metrics;
    private final Map<TopicPartition, MirroredTime> times = new ConcurrentHashMap<>();

    MirroredTimes(String mirror, MirrorMetrics metrics) {
        this.mirror = mirror;
        this.metrics = metrics;
    }

    /**
     * Starts {@code tp}'s time from its log: the max timestamp of the last batch (-1 for an empty log). Manager
     * thread; one read of one batch.
     */
    void seed(TopicPartition tp, MirrorLocalPartition partition) {
        times.put(tp, MirroredTime.fromLog(lastBatchMaxTimestamp(tp, partition)));
    }

    /** Gives {@code tp}'s time to its gauges, made at the end of its pass. Manager thread. */
    void publish(TopicPartition tp) {
        MirroredTime time = times.get(tp);
        if (time != null) {
            metrics.onMirroredTime(tp, time);
        }
    }

    Optional<MirroredTime> get(TopicPartition tp) {
        return Optional.ofNullable(times.get(tp));
    }

    /** A fetch answer ({@code MirrorFetchListener#onMirrored}); fetch thread. */
    void onFetched(TopicPartition tp, long appendedNewestTimestamp, long caughtUpAtMs) {
        MirroredTime next = times.computeIfPresent(tp, (k, t) -> t.afterFetch(appendedNewestTimestamp,
                caughtUpAtMs));
        if (next != null) {
            metrics.onMirroredTime(tp, next);
        }
    }

    void remove(TopicPartition tp) {
        times.remove(tp);
    }

    void retain(Set<TopicPartition> led) {
        times.keySet().retainAll(led);
    }

    private long lastBatchMaxTimestamp(TopicPartition tp, MirrorLocalPartition partition) {
        long end = partition.logEndOffset();
        if (end <= partition.logStartOffset()) {
            return -1L; // holds nothing
        }
        try {
            Records records = partition.read(end - 1, 1);
            long newest = -1L;
            for (RecordBatch batch : records.batches()) {
                newest = batch.maxTimestamp(); // the last batch read is the log's last
            }
            return newest;
        } catch (IOException | RuntimeException e) {
            // broad: a log cut or rolled meanwhile (an offset out of range) only costs the figure until the next
            // fetch appends a batch; reported with its stack trace, the partition mirrors on
            log.warn("[Mirror {} {}] could not read the timestamp of the log's last batch; its newest mirrored "
                    + "timestamp is unknown until the next fetch appends", mirror, tp, e);
            return -1L;
        }
    }
}
