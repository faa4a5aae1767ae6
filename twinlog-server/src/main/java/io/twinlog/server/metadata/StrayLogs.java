package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.TopicImage;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What to do, on the first metadata image after start, with the logs on disk the image does not give this broker.
 * Pure: the applier does what it is told.
 *
 * <p>A log is deleted only when the metadata says why it is not here any more: its topic ID's deletion is marked in
 * {@code /admin/delete_topics} (a completed mark stays until every broker that held a replica has been back long
 * enough to read it, decision 74), or its topic is there with that ID and its replicas no longer name this broker
 * (moved while the broker was down). That is what a ZooKeeper-mode Kafka broker waited for too: it deleted a log only
 * on the controller's StopReplica with delete, for a topic in {@code /admin/delete_topics} or a reassignment. A log
 * the metadata cannot account for (its topic simply gone, as when ZooKeeper was partly emptied or restored from an
 * old backup) is kept, unserved, and served again if its topic comes back. A log whose topic name now belongs to
 * another topic ID, with no mark for its own, is moved aside (renamed {@code -stray}, as Kafka's LogManager does):
 * kept, and out of the way of the new topic's replica. Two guards keep every log whatever the image says: an image
 * of another cluster (the start-up identity check refuses it first) and an image without any topic (metadata lost
 * under a matching cluster id).
 *
 * @param verdict what the image as a whole allows
 * @param strays  the logs the image does not give this broker, sorted, each with what to do with it
 */
record StrayLogs(Verdict verdict, List<Stray> strays) {

    enum Verdict {
        /** No stray log. */
        NONE,
        /** Each stray's {@link Fate} says what to do with it. */
        PER_LOG,
        /** Keep every log: the image lists no topic at all, as if the cluster's metadata had been lost. */
        KEEP_METADATA_EMPTY,
        /** Keep every log: the image is another cluster's (cannot pass the start-up check; a second guard). */
        KEEP_OTHER_CLUSTER
    }

    enum Fate {
        /** Delete: the deletion of its topic ID is marked. */
        DELETE_TOPIC_DELETED,
        /** Delete: its topic is there with its ID and the replicas no longer name this broker. */
        DELETE_REPLICA_MOVED,
        /** Keep it, unserved: nothing in the metadata says it was deleted or moved. */
        KEEP_UNACCOUNTED,
        /** Rename it aside ({@code -stray}) and keep it: its topic's name belongs to another topic ID now. */
        SET_ASIDE_NAME_REUSED,
        /** Keep it, unserved: the guard of the {@link Verdict} keeps every log. */
        KEEP_BY_GUARD
    }

    /** A log the image does not give this broker; {@code topicId} is empty for a log without partition metadata. */
    record Stray(TopicPartition partition, Optional<Uuid> topicId, Fate fate) {
        boolean deleted() {
            return fate == Fate.DELETE_TOPIC_DELETED || fate == Fate.DELETE_REPLICA_MOVED;
        }
    }

    /**
     * @param logDirClusterId the cluster id recorded in this broker's log dirs (checked at start)
     * @param logs            the partitions with a log on disk, with the topic ID each log records
     */
    static StrayLogs decide(int brokerId, String logDirClusterId, MetadataImage image,
                            Map<TopicPartition, Optional<Uuid>> logs) {
        List<Map.Entry<TopicPartition, Optional<Uuid>>> notHosted = logs.entrySet().stream()
                .filter(e -> !PartitionApplier.hostedHere(brokerId, image, e.getKey()))
                .sorted(Map.Entry.comparingByKey(Comparator.comparing(TopicPartition::topic)
                        .thenComparingInt(TopicPartition::partition)))
                .toList();
        if (notHosted.isEmpty()) {
            return new StrayLogs(Verdict.NONE, List.of());
        }
        Verdict verdict = !logDirClusterId.equals(image.clusterId()) ? Verdict.KEEP_OTHER_CLUSTER
                : image.topics().isEmpty() ? Verdict.KEEP_METADATA_EMPTY : Verdict.PER_LOG;
        List<Stray> strays = notHosted.stream().map(e -> new Stray(e.getKey(), e.getValue(),
                verdict == Verdict.PER_LOG ? fate(brokerId, image, e.getKey(), e.getValue()) : Fate.KEEP_BY_GUARD))
                .toList();
        return new StrayLogs(verdict, strays);
    }

    private static Fate fate(int brokerId, MetadataImage image, TopicPartition tp, Optional<Uuid> logTopicId) {
        if (logTopicId.isPresent() && image.deletionMarked(tp.topic(), logTopicId.get())) {
            return Fate.DELETE_TOPIC_DELETED;
        }
        Optional<TopicImage> topic = image.topic(tp.topic());
        if (topic.isEmpty()) {
            return Fate.KEEP_UNACCOUNTED;
        }
        if (logTopicId.isEmpty() || !topic.get().topicId().equals(logTopicId.get())) {
            return Fate.SET_ASIDE_NAME_REUSED;
        }
        boolean assignedHere = image.partition(tp).map(p -> p.replicas().contains(brokerId)).orElse(false);
        // assigned here and not hosted: its state node is missing (a partly emptied ZooKeeper), not a move
        return assignedHere ? Fate.KEEP_UNACCOUNTED : Fate.DELETE_REPLICA_MOVED;
    }

    /** The first few strays, for a log line. */
    static String summary(List<Stray> strays) {
        String shown = strays.stream().limit(10).map(s -> s.partition().toString()).reduce((a, b) -> a + ", " + b)
                .orElse("");
        return strays.size() > 10 ? shown + ", ..." : shown;
    }
}
