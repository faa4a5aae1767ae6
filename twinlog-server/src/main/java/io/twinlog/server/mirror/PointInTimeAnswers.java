package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.message.StopMirrorTopicsResponseData;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.PointInTimeOutcome;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.List;
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

    /**
     * Adds to each topic result of {@code answer} its partitions that record a failover to a point in time. A
     * partition STOPPED without one failed over at whatever it had: its leader ignored the time (a Twinlog from before
     * StopMirrorTopics version 1, in a rolling upgrade: the version is checked on the broker answering, the cut is
     * each leader's), or it was failed over already. Its records after the time are in the topic, not in the
     * quarantine, so the topic's result says so as an error, and the CLI fails, rather than a success.
     */
    static void fill(StopMirrorTopicsResponseData answer, MetadataImage image) {
        for (StopMirrorTopicsResponseData.MirrorTopicResult topic : answer.topics()) {
            TreeSet<Integer> partitions = new TreeSet<>(image.topic(topic.name()).map(t -> t.partitions().keySet())
                    .orElse(Set.of()));
            List<Integer> withoutTime = new ArrayList<>();
            for (int p : partitions) {
                MirrorImage.MirrorPartition mp = image.mirrors().partitions().get(new TopicPartition(topic.name(), p));
                if (mp == null) {
                    continue;
                }
                MirrorPartitionRecord rec = MirrorPartitionRecord.fromJson(mp.json());
                PointInTimeOutcome o = rec.pointInTime();
                if (o.isNone()) {
                    if (mp.state() == MirrorPartitionState.STOPPED) {
                        withoutTime.add(p);
                    }
                    continue;
                }
                topic.partitions().add(new StopMirrorTopicsResponseData.PointInTimeResult().setPartitionIndex(p)
                        .setReach(o.reach().name()).setKeptOffset(rec.lastMirroredOffset())
                        .setKeptTimestamp(o.keptTimestamp()).setQuarantinedFrom(o.quarantinedFrom())
                        .setQuarantinedTo(o.quarantinedTo()).setQuarantinedRecords(o.quarantinedRecords()));
            }
            if (!withoutTime.isEmpty() && topic.errorCode() == Errors.NONE.code()) {
                topic.setErrorCode(Errors.UNSUPPORTED_VERSION.code()).setErrorMessage("Partitions " + withoutTime
                        + " of " + topic.name() + " are STOPPED without a failover to the point in time: they kept "
                        + "everything they had mirrored, records after the time included (their leader runs a "
                        + "Twinlog without failovers to a point in time, or they were failed over before)");
                if (answer.errorCode() == Errors.NONE.code()) {
                    answer.setErrorCode(topic.errorCode()).setErrorMessage(topic.errorMessage());
                }
            }
        }
    }
}
