package io.twinlog.mirror.runtime;

import io.twinlog.common.Failures;
import io.twinlog.controller.zk.MetadataWatcher;
import io.twinlog.mirror.groups.GroupSelection;
import io.twinlog.mirror.groups.OffsetSyncPlan.CommittedOffset;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationGroup;
import io.twinlog.mirror.groups.OffsetSyncPlan.DestinationPartition;
import io.twinlog.mirror.groups.OffsetSyncPlan.GroupPlan;
import io.twinlog.mirror.groups.OffsetSyncPlan;
import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import io.twinlog.mirror.store.MirrorStore;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Syncs consumer group offsets from each mirror's source to this (destination) cluster, on the controller broker
 * only, every {@value MirrorDefinition#GROUPS_SYNC_INTERVAL_MS} ms of the mirror (default
 * {@value MirrorDefinition#DEFAULT_GROUPS_SYNC_INTERVAL_MS}). The shell around {@link OffsetSyncPlan}, which decides:
 * this class gathers its inputs and performs its writes.
 *
 * <p>One pass for a mirror whose source cluster ID is known and still answers at its address:
 * <ol>
 *   <li>Source: list the consumer groups (classic groups of protocol type "consumer" or none, and KIP-848 groups),
 *       keep those {@link GroupSelection selected} by the mirror's patterns (at most {@value #MAX_GROUPS_PER_PASS}),
 *       read their committed offsets.</li>
 *   <li>Destination (through a Kafka admin client to this cluster): describe the groups that have offsets for a
 *       {@link OffsetSyncPlan#syncableTopics syncable} topic, read their committed offsets there, and the log start
 *       offset and high watermark (ListOffsets, read_uncommitted) of the partitions concerned.</li>
 *   <li>Plan each group; write the changed offsets with AlterConsumerGroupOffsets (which the group coordinator
 *       refuses for a group that gained members since it was described, so a consumer starting meanwhile wins);
 *       record the group's last sync in ZooKeeper ({@code /mirror_groups/<mirror>/<group>}) for describe; remove the
 *       records of groups no longer selected or no longer on the source.</li>
 * </ol>
 * A source or destination that does not answer ends the pass with one log line; the next pass starts over. A group
 * whose write fails keeps its previous record, so describe shows how old its offsets are.
 *
 * <p>Threading: called only from {@link MirrorMetadataSync}'s thread; the interval bookkeeping is confined to it.
 * Every admin call is bounded by {@value #TIMEOUT_MS} ms.
 */
final class MirrorGroupOffsetSync {
    static final int MAX_GROUPS_PER_PASS = 10_000;
    private static final Logger log = LoggerFactory.getLogger(MirrorGroupOffsetSync.class);
    private static final int TIMEOUT_MS = 15_000;
    private static final int GROUPS_PER_REQUEST = 100;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final Supplier<Optional<Map<String, Object>>> localClients;
    private final MirrorMetrics metrics;
    private final Time time;
    /** Per mirror; each mirror's passes run on its own thread, one at a time (MirrorMetadataSync). */
    private final Map<String, Long> lastPassMs = new ConcurrentHashMap<>();
    /** Per mirror, groups skipped in the last pass because they are active here: logged at INFO when this changes. */
    private final Map<String, Set<String>> activeHere = new ConcurrentHashMap<>();

    /**
     * @param localClients how this broker's clients reach its own cluster (address and security), for the admin
     *                     client that writes the offsets; empty while not known yet
     */
    MirrorGroupOffsetSync(MirrorStore store, MetadataWatcher metadata,
                          Supplier<Optional<Map<String, Object>>> localClients, MirrorMetrics metrics, Time time) {
        this.store = store;
        this.metadata = metadata;
        this.localClients = localClients;
        this.metrics = metrics;
        this.time = time;
    }

    /** Forgets the mirrors not in {@code mirrors} (deleted). */
    void retainMirrors(Set<String> mirrors) {
        lastPassMs.keySet().retainAll(mirrors);
        activeHere.keySet().retainAll(mirrors);
    }

    /** Runs a pass for {@code mirror} if its interval has passed since the last one. */
    void maybeSync(MirrorDefinition mirror) {
        long now = time.milliseconds();
        Long lastPass = lastPassMs.get(mirror.name());
        if (lastPass != null && now - lastPass < mirror.groupsSyncIntervalMs()) {
            return;
        }
        lastPassMs.put(mirror.name(), now);
        GroupSelection selection = GroupSelection.of(mirror);
        if (selection.selectsNothing()) {
            return;
        }
        if (mirror.sourceClusterId().isEmpty()) {
            log.debug("[Mirror {}] group offset sync waits for the source cluster ID to be recorded", mirror.name());
            return;
        }
        Optional<Map<String, Object>> local = localClients.get();
        if (local.isEmpty()) {
            log.info("[Mirror {}] group offset sync skipped: this cluster's address is not known yet", mirror.name());
            return;
        }
        try (Admin source = SourceClusters.admin(mirror, TIMEOUT_MS);
             Admin destination = localAdmin(mirror.name(), local.get())) {
            if (syncOnce(mirror, selection, source, destination)) {
                metrics.onGroupOffsetSync(mirror.name());
            } else {
                metrics.onGroupOffsetSyncError(mirror.name());
            }
        } catch (ExecutionException e) {
            metrics.onGroupOffsetSyncError(mirror.name());
            log.info("[Mirror {}] group offset sync skipped: {}", mirror.name(),
                    Failures.rootMessage(e));
        } catch (java.util.concurrent.TimeoutException e) {
            metrics.onGroupOffsetSyncError(mirror.name());
            log.info("[Mirror {}] group offset sync skipped: a cluster did not answer within {} ms", mirror.name(),
                    TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // ZooKeeper errors on the sync records (Curator declares Exception): the next pass rewrites them
            metrics.onGroupOffsetSyncError(mirror.name());
            log.warn("[Mirror {}] group offset sync failed: {}", mirror.name(), e.toString());
        }
    }

    /** One pass; false if it could not be made or a group's offsets could not be read or written. */
    private boolean syncOnce(MirrorDefinition mirror, GroupSelection selection, Admin source, Admin destination)
            throws Exception {
        String sourceClusterId = source.describeCluster().clusterId().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        if (!sourceClusterId.equals(mirror.sourceClusterId().get())) {
            // The fetcher's check fails the mirror with the reason; offsets from another cluster are never copied.
            log.info("[Mirror {}] group offset sync skipped: the source answers as cluster {}, not {}", mirror.name(),
                    sourceClusterId, mirror.sourceClusterId().get());
            return false;
        }
        boolean complete = true;
        Set<String> groups = selectedGroups(mirror, selection, source);
        Set<String> stale = store.groupSyncIds(mirror.name());
        stale.removeAll(groups);
        store.removeGroupSyncs(mirror.name(), stale);

        Set<String> syncable = OffsetSyncPlan.syncableTopics(mirror.name(), metadata.image().mirrors());
        Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets = new HashMap<>();
        for (List<String> batch : batches(groups)) {
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            batch.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()));
            ListConsumerGroupOffsetsResult committed = source.listConsumerGroupOffsets(specs);
            for (String group : batch) {
                Map<TopicPartition, OffsetAndMetadata> offsets;
                try {
                    offsets = committed.partitionsToOffsetAndMetadata(group).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    log.info("[Mirror {}] could not read the source offsets of group {}: {}", mirror.name(), group,
                            Failures.rootMessage(e));
                    complete = false;
                    continue;
                }
                Map<TopicPartition, CommittedOffset> relevant = OffsetSyncPlan.relevantOffsets(toCommitted(offsets),
                        syncable);
                if (!relevant.isEmpty()) {
                    sourceOffsets.put(group, relevant);
                }
            }
        }
        if (sourceOffsets.isEmpty()) {
            return complete;
        }
        Map<TopicPartition, DestinationPartition> held = destinationPartitions(destination, sourceOffsets);
        int written = 0;
        for (List<String> batch : batches(sourceOffsets.keySet())) {
            Map<String, DestinationGroup> destinationGroups = destinationGroups(mirror.name(), destination, batch,
                    sourceOffsets);
            for (String group : batch) {
                if (!destinationGroups.containsKey(group)) {
                    continue;
                }
                GroupPlan plan = OffsetSyncPlan.planGroup(group, sourceOffsets.get(group), syncable,
                        destinationGroups.get(group), held);
                try {
                    if (apply(mirror.name(), plan, destination)) {
                        written += plan.writes().size();
                    }
                } catch (GroupWriteFailed e) {
                    complete = false; // logged with why; the group keeps its previous record
                }
            }
        }
        log.debug("[Mirror {}] group offset sync: {} group(s) with offsets for synced topics, {} offset(s) written",
                mirror.name(), sourceOffsets.size(), written);
        return complete;
    }

    /** A group's offsets could not be written (other than because it gained members here). */
    private static final class GroupWriteFailed extends Exception {
        GroupWriteFailed(String group, Throwable cause) {
            super("could not write the offsets of group " + group, cause, false, false);
        }
    }

    /** Writes a SYNC plan's offsets and records the sync; false if the group was skipped or the write refused. */
    private boolean apply(String mirror, GroupPlan plan, Admin destination) throws Exception {
        Set<String> active = activeHere.computeIfAbsent(mirror, m -> new HashSet<>());
        if (plan.outcome() == OffsetSyncPlan.Outcome.SKIPPED_ACTIVE) {
            if (active.add(plan.groupId())) {
                log.info("[Mirror {}] group {} is no longer synced from the source while {}", mirror, plan.groupId(),
                        plan.reason());
            }
            return false;
        }
        if (active.remove(plan.groupId())) {
            log.info("[Mirror {}] group {} has no members on this cluster any more; syncing it from the source again",
                    mirror, plan.groupId());
        }
        if (plan.outcome() != OffsetSyncPlan.Outcome.SYNC) {
            log.debug("[Mirror {}] group {} not synced: {}", mirror, plan.groupId(), plan.reason());
            return false;
        }
        if (plan.offsetsSynced() == 0) {
            return false;
        }
        if (!plan.writes().isEmpty()) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            plan.writes().forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o.offset(), o.leaderEpoch(),
                    o.metadata())));
            try {
                destination.alterConsumerGroupOffsets(plan.groupId(), offsets).all()
                        .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownMemberIdException) {
                    log.info("[Mirror {}] group {} gained members on this cluster; its offsets are theirs now", mirror,
                            plan.groupId());
                    return false;
                }
                log.info("[Mirror {}] could not write the offsets of group {}: {}", mirror, plan.groupId(),
                        Failures.rootMessage(e));
                throw new GroupWriteFailed(plan.groupId(), e.getCause());
            }
            Map<String, Long> written = new java.util.TreeMap<>();
            plan.writes().forEach((tp, o) -> written.put(tp.toString(), o.offset()));
            log.info("[Mirror {}] group {}: wrote {} offset(s) from the source {} ({} of {} partitions clamped to "
                    + "what this cluster holds)", mirror, plan.groupId(), written.size(), written,
                    plan.offsetsClamped(), plan.offsetsSynced());
        }
        store.recordGroupSync(mirror, new GroupSyncRecord(plan.groupId(), time.milliseconds(), plan.offsetsSynced(),
                plan.offsetsClamped()));
        return !plan.writes().isEmpty();
    }

    /**
     * The source's consumer groups selected by the mirror's patterns: classic groups with protocol type "consumer"
     * (or none: a group that only commits offsets) and KIP-848 consumer groups. Listed without a type filter, which
     * sources before ListGroups v5 do not support.
     */
    private Set<String> selectedGroups(MirrorDefinition mirror, GroupSelection selection, Admin source)
            throws Exception {
        Set<String> out = new TreeSet<>();
        for (GroupListing g : source.listGroups().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            boolean consumerGroup = g.type().map(t -> t == GroupType.CONSUMER
                    || (t == GroupType.CLASSIC && (g.protocol().isEmpty() || g.protocol().equals("consumer"))))
                    .orElse(g.protocol().isEmpty() || g.protocol().equals("consumer"));
            if (consumerGroup && selection.matches(g.groupId())) {
                out.add(g.groupId());
            }
        }
        if (out.size() > MAX_GROUPS_PER_PASS) {
            log.warn("[Mirror {}] {} source groups match {}; syncing the first {} by name", mirror.name(), out.size(),
                    mirror.groupIncludePatterns(), MAX_GROUPS_PER_PASS);
            Set<String> capped = new TreeSet<>();
            for (String g : out) {
                if (capped.size() == MAX_GROUPS_PER_PASS) {
                    break;
                }
                capped.add(g);
            }
            return capped;
        }
        return out;
    }

    /** Log start offset and high watermark of every partition concerned; partitions that fail are left out. */
    private static Map<TopicPartition, DestinationPartition> destinationPartitions(
            Admin destination, Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets) throws Exception {
        Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        sourceOffsets.values().forEach(offsets -> offsets.keySet().forEach(tp -> {
            earliest.put(tp, OffsetSpec.earliest());
            latest.put(tp, OffsetSpec.latest());
        }));
        ListOffsetsOptions readUncommitted = new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED);
        ListOffsetsResult starts = destination.listOffsets(earliest, readUncommitted);
        ListOffsetsResult highWatermarks = destination.listOffsets(latest, readUncommitted);
        Map<TopicPartition, DestinationPartition> out = new HashMap<>();
        for (TopicPartition tp : earliest.keySet()) {
            Optional<Long> start = offset(starts.partitionResult(tp));
            Optional<Long> hw = offset(highWatermarks.partitionResult(tp));
            if (start.isPresent() && hw.isPresent()) {
                out.put(tp, new DestinationPartition(start.get(), hw.get()));
            } else {
                log.debug("No offsets for {} on this cluster this time; its group offsets wait", tp);
            }
        }
        return out;
    }

    private static Optional<Long> offset(KafkaFuture<ListOffsetsResult.ListOffsetsResultInfo> future)
            throws InterruptedException {
        try {
            return Optional.of(future.get(TIMEOUT_MS, TimeUnit.MILLISECONDS).offset());
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            return Optional.empty(); // leader unknown, or not there yet: left for the next pass
        }
    }

    /**
     * How the destination describes each group and what it has committed for the partitions concerned; a group it
     * could not describe is left out (not knowing whether it is active there, nothing is written for it).
     */
    private static Map<String, DestinationGroup> destinationGroups(
            String mirror, Admin destination, List<String> groups,
            Map<String, Map<TopicPartition, CommittedOffset>> sourceOffsets) throws Exception {
        Map<String, KafkaFuture<ConsumerGroupDescription>> described = destination.describeConsumerGroups(groups)
                .describedGroups();
        Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec()
                .topicPartitions(sourceOffsets.get(g).keySet())));
        ListConsumerGroupOffsetsResult committedResult = destination.listConsumerGroupOffsets(specs);
        Map<String, DestinationGroup> out = new HashMap<>();
        for (String group : groups) {
            DestinationGroup g;
            try {
                ConsumerGroupDescription d = described.get(group).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                Map<TopicPartition, OffsetAndMetadata> committed = committedResult.partitionsToOffsetAndMetadata(group)
                        .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                g = new DestinationGroup(d.groupState(), d.members().size(), toCommitted(committed));
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                    log.info("[Mirror {}] could not describe group {} on this cluster; not synced this time: {}",
                            mirror, group, Failures.rootMessage(e));
                    continue;
                }
                g = DestinationGroup.absent();
            }
            out.put(group, g);
        }
        return out;
    }

    private static Map<TopicPartition, CommittedOffset> toCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, CommittedOffset> out = new HashMap<>();
        offsets.forEach((tp, o) -> {
            if (o != null) {
                out.put(tp, new CommittedOffset(o.offset(), o.leaderEpoch(), o.metadata()));
            }
        });
        return out;
    }

    private static List<List<String>> batches(Set<String> groups) {
        List<List<String>> out = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String g : new TreeSet<>(groups)) {
            current.add(g);
            if (current.size() == GROUPS_PER_REQUEST) {
                out.add(current);
                current = new ArrayList<>();
            }
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }

    private static Admin localAdmin(String mirror, Map<String, Object> local) {
        return ShortLivedAdmin.local("twinlog-mirror-groups-" + mirror, local, TIMEOUT_MS);
    }
}
