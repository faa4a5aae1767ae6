package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import org.apache.kafka.common.TopicPartition;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * What to do, on the first metadata image after start, with the logs on disk the image does not give this broker
 * (topics deleted or replicas moved while it was down). Pure: the applier deletes what it is told.
 *
 * <p>A stray log is deleted only when the image is from the cluster the log dirs belong to and lists at least one
 * topic. The start-up identity check already refuses another cluster's ZooKeeper; this second guard holds if the
 * metadata is lost under a matching cluster id (an ensemble restored without its topics): a ZooKeeper-mode Kafka
 * broker deleted a partition's log only when the controller said so (StopReplica with delete), never because the
 * metadata had nothing to say, and Kafka 4's LogManager moves stray logs aside rather than delete them.
 *
 * @param verdict what to do with {@link #strays}
 * @param strays  the logs the image does not give this broker, sorted
 */
record StrayLogs(Verdict verdict, List<TopicPartition> strays) {

    enum Verdict {
        /** No stray log. */
        NONE,
        /** Delete the strays: their topics were deleted or their replicas moved while the broker was down. */
        DELETE,
        /** Keep every log: the image lists no topic at all, as if the cluster's metadata had been lost. */
        KEEP_METADATA_EMPTY,
        /** Keep every log: the image is another cluster's (cannot pass the start-up check; a second guard). */
        KEEP_OTHER_CLUSTER
    }

    /**
     * @param logDirClusterId the cluster id recorded in this broker's log dirs (checked at start)
     * @param logs            the partitions with a log on disk
     */
    static StrayLogs decide(int brokerId, String logDirClusterId, MetadataImage image, Collection<TopicPartition> logs) {
        List<TopicPartition> strays = logs.stream()
                .filter(tp -> !PartitionApplier.hostedHere(brokerId, image, tp))
                .sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition))
                .toList();
        if (strays.isEmpty()) {
            return new StrayLogs(Verdict.NONE, strays);
        }
        if (!logDirClusterId.equals(image.clusterId())) {
            return new StrayLogs(Verdict.KEEP_OTHER_CLUSTER, strays);
        }
        if (image.topics().isEmpty()) {
            return new StrayLogs(Verdict.KEEP_METADATA_EMPTY, strays);
        }
        return new StrayLogs(Verdict.DELETE, strays);
    }

    /** The first few strays, for a log line. */
    String summary() {
        String shown = strays.stream().limit(10).map(TopicPartition::toString).reduce((a, b) -> a + ", " + b)
                .orElse("");
        return strays.size() > 10 ? shown + ", ..." : shown;
    }
}
