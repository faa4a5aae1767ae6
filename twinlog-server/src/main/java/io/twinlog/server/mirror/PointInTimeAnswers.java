package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.PointInTimeOutcome;
import org.apache.kafka.common.TopicPartition;

import java.util.Set;
import java.util.TreeSet;

/**
 * The per-partition part of the answer to a failover to a point in time (StopMirrorTopics version 1, issue 30
 * point 2): from each partition's state record in the image, what it kept (up to its last mirrored offset, with the
 * newest timestamp kept), what went to the quarantine, and whether it reached the time. Pure.
 */
final class PointInTimeAnswers {
    private PointInTimeAnswers() {
    }

    /** Adds to each topic result of {@code answer} its partitions that record a failover to a point in time. */
    static void fill(StopMirrorTopicsResponseData answer, MetadataImage image) {
        for (StopMirrorTopicsResponseData.MirrorTopicResult topic : answer.topics()) {
            TreeSet<Integer> partitions = new TreeSet<>(image.topic(topic.name()).map(t -> t.partitions().keySet())
                    .orElse(Set.of()));
            for (int p : partitions) {
                MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic.name(), p));
                if (mp == null) {
                    continue;
                }
                MirrorPartitionRecord rec = MirrorPartitionRecord.fromJson(mp.json());
                PointInTimeOutcome o = rec.pointInTime();
                if (o.isNone()) {
                    continue;
                }
                topic.partitions().add(new StopMirrorTopicsResponseData.PointInTimeResult().setPartitionIndex(p)
                        .setReach(o.reach().name()).setKeptOffset(rec.lastMirroredOffset())
                        .setKeptTimestamp(o.keptTimestamp()).setQuarantinedFrom(o.quarantinedFrom())
                        .setQuarantinedTo(o.quarantinedTo()).setQuarantinedRecords(o.quarantinedRecords()));
            }
        }
    }
}
