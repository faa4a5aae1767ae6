package io.twinlog.server.metadata;

import io.twinlog.controller.metadata.MetadataDelta;
import io.twinlog.controller.metadata.MetadataImage;
import io.twinlog.controller.metadata.MirrorImage;
import io.twinlog.mirror.runtime.AppliedTruncations;
import io.twinlog.controller.metadata.PartitionImage;
import io.twinlog.controller.metadata.PartitionState;
import io.twinlog.controller.metadata.TopicImage;
import io.twinlog.replication.Partition;
import io.twinlog.replication.ReplicaManager;
import io.twinlog.common.mirror.TruncationPoints;
import io.twinlog.common.tasks.Concurrently;
import io.twinlog.storage.LogStore;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Turns metadata image changes into local actions, on the metadata thread: host the partitions assigned to this
 * broker with their current leadership, stop hosting (and delete) the ones removed, apply topic config changes to
 * the logs, and on the first image delete stray logs left on disk by topics deleted while this broker was down
 * (only when that image is of the log dirs' cluster and lists any topic at all: {@link StrayLogs}).
 *
 * <p>Deltas: after the first image only the partitions whose record changed ({@link MetadataDelta}, see
 * {@link #partitionsToApply}) are applied, so an unchanged partition's leader/ISR lock is never taken for another
 * partition's change; a partition whose apply failed is retried with every image until it succeeds.
 */
public final class PartitionApplier {
    private static final Logger log = LoggerFactory.getLogger(PartitionApplier.class);
    /**
     * Threads that apply one image's truncation points at once. Each replica's point is a cut and a synced file
     * (two syncs); one after another they were 2.6 to 4.7 s of each broker's metadata thread in a 1,000-partition
     * mirror start, and this disk syncs about 3.5 times as many small files per second on 8 threads as on one.
     */
    static final int TRUNCATION_POINT_THREADS = 8;

    private final int brokerId;
    /** The cluster id in this broker's log dirs' meta.properties: stray logs are deleted only for that cluster. */
    private final String logDirClusterId;
    private final ReplicaManager replicaManager;
    private final LogStore logStore;
    private final TopicConfigs topicConfigs;
    private final AppliedTruncations appliedTruncations;
    /** What this broker lost with its disk: not led while it is lost (the leadership is from before the loss). */
    private final LostReplicaTracker lost;
    private boolean strayLogsChecked;
    /** Partitions whose last apply failed: retried with every image until one succeeds. Metadata thread only. */
    private final Set<TopicPartition> unapplied = new HashSet<>();
    /**
     * Logs of topics that left the image without a deletion mark (ZooKeeper emptied or replaced under this broker,
     * a topic node removed by hand), with their topic ID: kept on disk, unhosted, and deleted only if a mark for that
     * topic ID appears; hosted again if the topic comes back. Metadata thread only.
     */
    private final Map<TopicPartition, Uuid> keptLogs = new HashMap<>();
    /** Partitions handed to {@link ReplicaManager#applyPartition} since start (each takes the partition's lock). */
    private final AtomicLong partitionsApplied = new AtomicLong();

    /**
     * @param logDirClusterId    the cluster id the log dirs record (checked against ZooKeeper's at start)
     * @param appliedTruncations where this broker says which mirror truncation points its replicas applied
     * @param lost               the replicas this broker lost with its disk ({@link LostReplicas})
     */
    public PartitionApplier(int brokerId, String logDirClusterId, ReplicaManager replicaManager, LogStore logStore,
                            TopicConfigs topicConfigs, AppliedTruncations appliedTruncations,
                            LostReplicaTracker lost) {
        this.brokerId = brokerId;
        this.logDirClusterId = logDirClusterId;
        this.replicaManager = replicaManager;
        this.logStore = logStore;
        this.topicConfigs = topicConfigs;
        this.appliedTruncations = appliedTruncations;
        this.lost = lost;
    }

    /** How many partition leadership records this applier has applied since start; for the scale benchmark. */
    public long partitionsApplied() {
        return partitionsApplied.get();
    }

    public void onImage(MetadataImage previous, MetadataImage next, MetadataDelta delta) {
        Set<TopicPartition> toApply;
        if (strayLogsChecked) {
            toApply = partitionsToApply(brokerId, previous, next, delta);
        } else {
            // the first image (and every one until the stray-log check has run) applies everything
            toApply = hostedBy(brokerId, next);
            Map<TopicPartition, Long> published = new HashMap<>();
            next.mirrors().appliedTruncations().getOrDefault(brokerId, Map.of()).forEach(published::put);
            appliedTruncations.loadFrom(published, toApply);
        }
        toApply.addAll(unapplied);
        unapplied.clear();
        Map<TopicPartition, TruncationPoints> truncations = new HashMap<>();
        for (TopicPartition tp : toApply) {
            truncationPoints(next.mirrors().partitions().get(tp)).ifPresent(t -> truncations.put(tp, t));
        }
        applyTruncationPointsConcurrently(next, truncations);
        for (TopicPartition tp : toApply) {
            Optional<TopicImage> topic = next.topic(tp.topic());
            PartitionImage p = topic.map(t -> t.partitions().get(tp.partition())).orElse(null);
            if (p == null || !p.replicas().contains(brokerId) || p.state() == null) {
                continue;   // gone or not ours: the removal pass below handles it
            }
            partitionsApplied.incrementAndGet();
            Optional<TruncationPoints> truncation = Optional.ofNullable(truncations.get(tp));
            int leader = p.leader();
            if (leader == brokerId && lost.current().isLost(new TopicIdPartition(topic.get().topicId(), tp),
                    p.leaderEpoch())) {
                // a leadership from before this broker lost its log (no controller has changed it since): leading
                // an empty log would make the followers truncate theirs to it. A follower of no one until the
                // controller, which sees the loss in the registration, elects another replica
                log.warn("Not leading {} in leader epoch {}: this broker was its leader before it lost its log of "
                        + "it; waiting for the controller to elect a replica that has the records", tp,
                        p.leaderEpoch());
                leader = PartitionState.NO_LEADER;
            }
            try {
                Optional<Partition> applied = replicaManager.applyPartition(tp, topic.get().topicId(), leader,
                        p.leaderEpoch(), p.state().partitionEpoch(), p.replicas(), p.isr(), truncation,
                        earlierTopicId -> next.deletionMarked(tp.topic(), earlierTopicId));
                if (truncation.isPresent() && applied.isPresent()
                        && applied.get().appliedTruncationIds().contains(truncation.get().latestId())
                        && !Long.valueOf(truncation.get().latestId()).equals(
                                next.mirrors().truncationsApplied(tp).get(brokerId))) {
                    appliedTruncations.confirm(tp, truncation.get().latestId());
                }
            } catch (Exception e) {
                // broad: one partition failing to be hosted, for any reason, must not stop the others
                unapplied.add(tp);
                log.error("Could not host {}; it stays unavailable on broker {} and is retried with the next "
                        + "metadata change", tp, brokerId, e);
            }
        }
        for (String topic : delta.changedConfigTopics()) {
            if (previous.topic(topic).isPresent() && next.topic(topic).isPresent()) {
                Map<String, String> after = next.topicConfig(topic);
                logStore.topicConfigUpdated(topic, topicConfigs.asProperties(after));
                log.info("Applied config overrides {} to topic {}", after, topic);
            }
        }
        // Takes no partition lock: a hosted partition the image no longer gives this broker goes. Only those the
        // delta names can have gone (every hosted one on the first image: scanning all per image was a visible
        // part of the metadata thread's time in a 1,000-partition failover)
        List<Partition> candidates = new ArrayList<>();
        if (!strayLogsChecked) {
            candidates.addAll(replicaManager.partitions());
        } else {
            Set<TopicPartition> touched = new HashSet<>(delta.removedPartitions());
            touched.addAll(delta.changedPartitions());
            touched.forEach(tp -> replicaManager.partition(tp).ifPresent(candidates::add));
        }
        for (Partition p : candidates) {
            if (!hostedHere(brokerId, next, p.topicPartition())) {
                TopicPartition tp = p.topicPartition();
                boolean topicGone = next.topic(tp.topic()).map(t -> !t.topicId().equals(p.topicId())).orElse(true);
                // reassigned away: the topic is there and the replicas no longer name this broker. A partition still
                // assigned here whose state node is gone was not moved (a recursive delete of ZooKeeper takes the
                // children first), and a topic gone without a mark was not deleted: their logs stay
                boolean reassigned = !topicGone && !next.partition(tp).map(i -> i.replicas().contains(brokerId))
                        .orElse(false);
                boolean marked = next.deletionMarked(tp.topic(), p.topicId());
                boolean deleted = marked || reassigned;
                replicaManager.removePartition(tp, deleted);
                appliedTruncations.forget(tp);
                if (deleted) {
                    log.info("{} removed from broker {} ({})", tp, brokerId,
                            marked ? "topic deleted" : "replica reassigned");
                } else {
                    keptLogs.put(tp, p.topicId());
                    log.error("{} (topic ID {}) is gone from ZooKeeper without a deletion or a reassignment ({}): "
                            + "broker {} stops serving it and keeps its log. Was ZooKeeper emptied or replaced under "
                            + "the cluster? The log is served again if the partition comes back with this topic ID, "
                            + "and deleted only by a deletion of the topic", tp, p.topicId(), topicGone
                            ? "no mark in /admin/delete_topics" : "its state node is gone", brokerId);
                }
            }
        }
        resolveKeptLogs(next);
        for (TopicPartition tp : replicaManager.offlinePartitions().keySet()) {
            if (!hostedHere(brokerId, next, tp)) {
                replicaManager.removePartition(tp, false); // its data is in a failed dir: nothing to delete
            }
        }
        if (!strayLogsChecked) {
            strayLogsChecked = true;
            handleStrayLogs(next);
        }
    }

    /**
     * Applies, on a few threads at once, the {@code truncations} of the partitions the image touches whose hosted
     * replica has one to apply (decision 96), before the loop that applies each partition in turn. Each replica still cuts and
     * records its point under its own lock, in that order, so a restart never applies a point twice; the loop then
     * finds the point applied, and a replica whose point failed here is applied (and reported) by the loop as
     * before. Replicas not hosted yet, or of another incarnation of the topic, are left to the loop.
     */
    private void applyTruncationPointsConcurrently(MetadataImage image,
                                                   Map<TopicPartition, TruncationPoints> truncations) {
        List<PendingTruncation> pending = new ArrayList<>();
        for (Map.Entry<TopicPartition, TruncationPoints> entry : truncations.entrySet()) {
            TopicPartition tp = entry.getKey();
            Optional<Partition> partition = replicaManager.partition(tp);
            Optional<Uuid> topicId = image.topic(tp.topic()).map(TopicImage::topicId);
            if (partition.isEmpty() || topicId.isEmpty() || !partition.get().topicId().equals(topicId.get())) {
                continue;
            }
            try {
                if (entry.getValue().cutFor(partition.get().appliedTruncationIds()).isPresent()) {
                    pending.add(new PendingTruncation(partition.get(), entry.getValue()));
                }
            } catch (IOException e) {
                log.debug("Could not read the applied truncation point of {}; the partition's apply retries", tp, e);
            }
        }
        if (pending.size() < 2) {
            return; // nothing to overlap: the loop applies it
        }
        long start = System.nanoTime();
        List<Concurrently.Outcome<Boolean>> outcomes;
        try {
            outcomes = Concurrently.run(pending, TRUNCATION_POINT_THREADS, "twinlog-truncation-points-" + brokerId,
                    p -> p.partition().applyTruncationPoints(p.truncation()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // shutting down: the loop applies what is left, one by one
            return;
        }
        int failed = 0;
        for (int i = 0; i < outcomes.size(); i++) {
            if (outcomes.get(i).failed()) {
                failed++;
                // the loop applies it again and logs the error with the partition left unavailable if it fails again
                log.debug("Applying the truncation point of {} failed; the partition's apply retries",
                        pending.get(i).partition().topicPartition(), outcomes.get(i).failure());
            }
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (failed == 0) {
            log.info("Broker {} applied the truncation points of {} mirror replicas in {} ms", brokerId,
                    pending.size(), ms);
        } else {
            log.info("Broker {} applied the truncation points of {} mirror replicas in {} ms; {} failed and are "
                    + "applied again one by one", brokerId, pending.size() - failed, ms, failed);
        }
    }

    /** A hosted replica with a truncation point it has not applied. */
    private record PendingTruncation(Partition partition, TruncationPoints truncation) {
    }

    /** A kept log whose topic came back (hosted again above) or was since deleted by an operator. */
    private void resolveKeptLogs(MetadataImage image) {
        if (keptLogs.isEmpty()) {
            return;
        }
        keptLogs.entrySet().removeIf(e -> {
            TopicPartition tp = e.getKey();
            if (replicaManager.partition(tp).isPresent()) {
                return true; // hosted again: the topic is back (the applier reopened the log) or another took it
            }
            if (image.deletionMarked(tp.topic(), e.getValue())) {
                logStore.log(tp).filter(l -> l.topicId().map(e.getValue()::equals).orElse(false))
                        .ifPresent(l -> logStore.deleteLog(tp));
                log.info("{} (topic ID {}) deleted from broker {}: its deletion is marked now", tp, e.getValue(),
                        brokerId);
                return true;
            }
            return false;
        });
    }

    private void handleStrayLogs(MetadataImage image) {
        Map<TopicPartition, Optional<Uuid>> logs = new HashMap<>();
        logStore.allLogs().forEach(l -> logs.put(l.topicPartition(), l.topicId()));
        StrayLogs strays = StrayLogs.decide(brokerId, logDirClusterId, image, logs);
        List<StrayLogs.Stray> kept = new ArrayList<>();
        for (StrayLogs.Stray stray : strays.strays()) {
            TopicPartition tp = stray.partition();
            String id = stray.topicId().map(Uuid::toString).orElse("none recorded");
            switch (stray.fate()) {
                case DELETE_TOPIC_DELETED -> {
                    log.info("Deleting stray log {} (topic ID {}): its topic was deleted while broker {} was down",
                            tp, id, brokerId);
                    logStore.deleteLog(tp);
                }
                case DELETE_REPLICA_MOVED -> {
                    log.info("Deleting stray log {} (topic ID {}): its replica moved off broker {} while it was down",
                            tp, id, brokerId);
                    logStore.deleteLog(tp);
                }
                case SET_ASIDE_NAME_REUSED -> {
                    log.error("Log {} (topic ID {}) is of no topic in the metadata, and topic {} now has topic ID {}, "
                            + "with no deletion of {} recorded: broker {} renames the log's dir *-stray and keeps it "
                            + "(not served; delete it by hand if that topic's data is not wanted)", tp, id, tp.topic(),
                            image.topic(tp.topic()).map(t -> t.topicId().toString()).orElse("?"), id, brokerId);
                    logStore.setAsideLog(tp);
                }
                case KEEP_UNACCOUNTED, KEEP_BY_GUARD -> {
                    kept.add(stray);
                    stray.topicId().ifPresent(topicId -> keptLogs.put(tp, topicId));
                }
            }
        }
        if (kept.isEmpty()) {
            return;
        }
        switch (strays.verdict()) {
            case KEEP_METADATA_EMPTY -> log.warn("The first metadata image lists no topic at all, but broker {} has "
                    + "{} partition logs ({}): keeping them all, unserved. Deleting them would lose a cluster's data "
                    + "to a ZooKeeper that lost its metadata; restore the metadata and they are served again, or "
                    + "delete the logs by hand if they are no longer wanted", brokerId, kept.size(),
                    StrayLogs.summary(kept));
            case KEEP_OTHER_CLUSTER -> log.error("The metadata image is of cluster {} but broker {}'s log dirs belong "
                    + "to cluster {}: keeping its {} partition logs the image does not list ({})", image.clusterId(),
                    brokerId, logDirClusterId, kept.size(), StrayLogs.summary(kept));
            default -> log.error("Broker {} keeps {} partition logs the metadata does not account for, unserved ({}): "
                    + "their topics are gone from ZooKeeper without a recorded deletion (/admin/delete_topics) or "
                    + "reassignment. Was ZooKeeper partly emptied or restored from an old copy? A log is served again "
                    + "if its topic comes back with its topic ID, and deleted by a deletion of that topic",
                    brokerId, kept.size(), StrayLogs.summary(kept));
        }
    }

    /**
     * The partitions of this broker an image change must re-apply: those whose assignment or leadership record
     * changed (new ones included), and mirror partitions whose "keep the source's epochs" flag flipped (a mirror
     * record or mirror topic change). Every other partition is left alone: its lock is not taken. Pure.
     */
    static Set<TopicPartition> partitionsToApply(int brokerId, MetadataImage previous, MetadataImage next,
                                                 MetadataDelta delta) {
        Set<TopicPartition> out = new HashSet<>();
        for (TopicPartition tp : delta.changedPartitions()) {
            if (hostedHere(brokerId, next, tp)) {
                out.add(tp);
            }
        }
        Set<TopicPartition> mirrorChanged = new HashSet<>(delta.changedMirrorPartitions());
        for (String topic : delta.changedMirrorTopics()) {
            next.partitions(topic).keySet().forEach(p -> mirrorChanged.add(new TopicPartition(topic, p)));
        }
        for (TopicPartition tp : mirrorChanged) {
            if (hostedHere(brokerId, next, tp)
                    && (previous.mirrors().keepsSourceEpochs(tp) != next.mirrors().keepsSourceEpochs(tp)
                    || truncationId(previous, tp) != truncationId(next, tp))) {
                out.add(tp);
            }
        }
        return out;
    }

    private static long truncationId(MetadataImage image, TopicPartition tp) {
        MirrorImage.MirrorPartition p = image.mirrors().partitions().get(tp);
        return p == null ? 0L : p.latestTruncationId();
    }

    private static Optional<TruncationPoints> truncationPoints(MirrorImage.MirrorPartition mirror) {
        if (mirror == null || mirror.latestTruncationId() == 0L) {
            return Optional.empty();
        }
        List<TruncationPoints.Point> points = new ArrayList<>();
        mirror.truncationPoints().forEach(p -> points.add(new TruncationPoints.Point(p[0], p[1])));
        return Optional.of(new TruncationPoints(points, "the mirror partition's truncation point, recorded by its "
                + "leader for every replica"));
    }

    /** Every partition the image gives this broker (with a leadership record): the first image applies them all. */
    static Set<TopicPartition> hostedBy(int brokerId, MetadataImage image) {
        Set<TopicPartition> out = new HashSet<>();
        for (TopicImage topic : image.topics().values()) {
            for (PartitionImage p : topic.partitions().values()) {
                if (p.replicas().contains(brokerId) && p.state() != null) {
                    out.add(new TopicPartition(topic.name(), p.partition()));
                }
            }
        }
        return out;
    }

    static boolean hostedHere(int brokerId, MetadataImage image, TopicPartition tp) {
        return image.partition(tp).map(p -> p.replicas().contains(brokerId) && p.state() != null).orElse(false);
    }
}
