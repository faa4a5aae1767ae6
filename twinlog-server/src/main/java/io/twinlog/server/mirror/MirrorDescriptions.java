package io.twinlog.server.mirror;

import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirror;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorConfig;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorGroup;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorPartition;
import io.twinlog.clients.mirror.message.DescribeClusterMirrorsResponseData.DescribedMirrorTopic;
import io.twinlog.clients.mirror.message.ListClusterMirrorsResponseData.ListedMirror;
import io.twinlog.common.mirror.DesiredMirrorState;
import io.twinlog.common.mirror.MirrorPartitionState;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.mirror.partition.MirroredTime;
import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorPartitionRecord;
import io.twinlog.mirror.store.MirrorProgress;
import io.twinlog.mirror.store.MirrorTruncation;
import io.twinlog.mirror.store.PointInTimeOutcome;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The entries of the ListClusterMirrors and DescribeClusterMirrors answers, built from what the handler read: the
 * mirror's definition and topics (ZooKeeper), the partitions' records (a {@link MirrorMetadataView}), their last
 * progress and the group syncs. Pure: no I/O. Credentials given at creation are never sent back: a sensitive
 * config goes out as its key, its value null.
 */
final class MirrorDescriptions {
    private MirrorDescriptions() {
    }

    /** A mirror as ListClusterMirrors lists it; the topic names only when asked for. */
    static ListedMirror listed(MirrorDefinition mirror, Map<String, DesiredMirrorState> topics,
                               boolean includeTopicNames) {
        return new ListedMirror().setMirrorName(mirror.name()).setSourceBootstrap(mirror.sourceBootstrap())
                .setSourceClusterId(mirror.sourceClusterId().orElse(null)).setState(mirror.state().name())
                .setTopicCount(topics.size())
                .setTopicNames(includeTopicNames ? new ArrayList<>(topics.keySet()) : new ArrayList<>());
    }

    /** A describe entry that answers only with an error: state and source_bootstrap are not nullable, so empty. */
    static DescribedMirror refused(String name, MirrorApiError error) {
        return new DescribedMirror().setMirrorName(name).setErrorCode(error.code()).setErrorMessage(error.message())
                .setState("").setStateReason(null).setSourceBootstrap("").setSourceClusterId(null);
    }

    /**
     * A described mirror: its definition (sensitive values hidden), its topics with each partition this cluster
     * has, and the groups it syncs.
     *
     * @param desired  the mirror's topics with the state the operator asked for
     * @param progress what the partitions' leaders last recorded under {@code /mirror_progress}; a partition
     *                 missing here answers with its state record's
     * @param nowMs    this broker's time, for each partition's RPO
     */
    static DescribedMirror described(MirrorDefinition mirror, Map<String, DesiredMirrorState> desired,
                                     MirrorMetadataView view, Map<TopicPartition, MirrorProgress> progress,
                                     Collection<GroupSyncRecord> groups, long nowMs) {
        DescribedMirror described = new DescribedMirror().setMirrorName(mirror.name()).setErrorCode(Errors.NONE.code())
                .setErrorMessage(null).setState(mirror.state().name())
                .setStateReason(mirror.stateReason().orElse(null)).setSourceBootstrap(mirror.sourceBootstrap())
                .setSourceClusterId(mirror.sourceClusterId().orElse(null));
        mirror.configs().forEach((k, v) -> {
            boolean sensitive = MirrorDefinition.isSensitive(k);
            described.configs().add(new DescribedMirrorConfig().setName(k).setValue(sensitive ? null : v)
                    .setSensitive(sensitive));
        });
        described.setIncludePatterns(new ArrayList<>(mirror.includePatterns()));
        described.setExcludePatterns(new ArrayList<>(mirror.excludePatterns()));
        desired.forEach((topic, state) -> {
            DescribedMirrorTopic t = new DescribedMirrorTopic().setTopicName(topic).setTopicId(view.topicId(topic))
                    .setDesiredState(state.name()).setSourceTopicName(view.sourceTopic(topic).orElse(null));
            for (PartitionImage p : view.partitions(topic)) {
                t.partitions().add(partition(new TopicPartition(topic, p.partition()), p, view, progress, nowMs));
            }
            described.topics().add(t);
        });
        List<DescribedMirrorGroup> groupEntries = new ArrayList<>();
        for (GroupSyncRecord r : groups) {
            groupEntries.add(new DescribedMirrorGroup().setGroupId(r.groupId()).setLastSyncTimeMs(r.lastSyncMs())
                    .setOffsetsSynced(r.offsetsSynced()).setOffsetsClamped(r.offsetsClamped())
                    .setGroupType(r.type().name()));
        }
        return described.setGroups(groupEntries);
    }

    /**
     * One partition's state and progress, as its destination leader last recorded them: the state record, and the
     * source high watermark and log end under {@code /mirror_progress} (at every state change, and at most every
     * 5 s while they move), so every broker answers the same, whichever replica it holds or how far it has got;
     * with the newest mirrored timestamp and mirrored-up-to time recorded there, and the RPO they give at
     * {@code nowMs} (decision 122: a leader that stops recording lets the RPO grow, as it should; a STOPPED
     * partition has none).
     */
    static DescribedMirrorPartition partition(TopicPartition tp, PartitionImage image, MirrorMetadataView view,
                                              Map<TopicPartition, MirrorProgress> recorded, long nowMs) {
        MirrorPartitionRecord rec = view.record(tp);
        MirrorProgress progress = recorded.getOrDefault(tp, rec.progress());
        MirrorTruncation truncation = rec.truncation();
        ShownTimes times = ShownTimes.of(rec, progress);
        return new DescribedMirrorPartition().setPartitionIndex(tp.partition())
                .setState(rec.state().name()).setSourceLogEndOffset(progress.sourceHighWatermark())
                .setDestinationLogEndOffset(progress.destinationLogEndOffset()).setLag(progress.lag())
                .setRetryAttempt((short) rec.retryAttempt()).setLastError(rec.lastError().orElse(null))
                .setLastMirroredEpoch(rec.lastMirroredEpoch()).setLastMirroredOffset(rec.lastMirroredOffset())
                .setOutOfSyncReplicas(image.replicas().stream().filter(r -> !image.isr().contains(r))
                        .collect(Collectors.toCollection(ArrayList::new)))
                .setTruncationOffset(truncation.isNone() ? -1L : truncation.latest().offset())
                // the replicas LOG_TRUNCATION waits for: the ISR, or every replica with the topic's flag (decision 38)
                .setTruncationPendingReplicas(view.truncationPendingReplicas(tp, image, truncation))
                .setTruncatedOffsets(truncation.removed()).setConsistentFromOffset(truncation.consistentFrom())
                .setNewestMirroredTimestamp(times.newest()).setMirroredUpToMs(times.upTo())
                // a failed-over partition has nothing left to lose from its source: no RPO (its times stay shown)
                .setRpoMs(rec.state() == MirrorPartitionState.STOPPED ? -1L
                        : MirroredTime.rpoMs(times.upTo(), nowMs));
    }

    /**
     * The newest mirrored timestamp and mirrored-up-to time a partition shows: the recorded ones, except after a
     * failover to a point in time cut the log, whose recorded times may name batches no longer held (the progress
     * is not rewritten once the fetcher is gone): then the newest batch kept, and at most the time asked for.
     */
    record ShownTimes(long newest, long upTo) {
        static ShownTimes of(MirrorPartitionRecord rec, MirrorProgress progress) {
            PointInTimeOutcome cut = rec.pointInTime();
            boolean failingOver = rec.state() == MirrorPartitionState.STOPPING
                    || rec.state() == MirrorPartitionState.STOPPED;
            if (!failingOver || cut.isNone() || cut.quarantinedFrom() < 0) {
                return new ShownTimes(progress.newestMirroredTimestamp(), progress.mirroredUpToMs());
            }
            long recorded = progress.mirroredUpToMs();
            return new ShownTimes(cut.keptTimestamp(), recorded < 0 ? cut.atMs() : Math.min(recorded, cut.atMs()));
        }
    }
}
