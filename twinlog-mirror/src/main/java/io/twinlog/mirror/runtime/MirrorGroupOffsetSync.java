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
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Syncs consumer group offsets and share groups' start offsets from each mirror's source to this (destination)
 * cluster, on the controller broker only, every {@value MirrorDefinition#GROUPS_SYNC_INTERVAL_MS} ms of the mirror
 * (default {@value MirrorDefinition#DEFAULT_GROUPS_SYNC_INTERVAL_MS}). The shell around {@link OffsetSyncPlan}, which
 * decides: this class gathers its inputs and performs its writes, through {@link GroupOffsets} for what differs
 * between the two types of group.
 *
 * <p>One pass for a mirror whose source cluster ID is known and still answers at its address:
 * <ol>
 *   <li>Source: list the groups (one ListGroups) and keep the consumer groups (classic groups of protocol type
 *       "consumer" or none, and KIP-848 groups) and share groups (KIP-932) {@link GroupSelection selected} by the
 *       mirror's patterns (at most {@value #MAX_GROUPS_PER_PASS} in all); read their committed offsets or
 *       share-partition start offsets.</li>
 *   <li>Destination (through a Kafka admin client to this cluster): list its groups, leaving out a source group
 *       whose ID is another type of group here (WARN once); describe the groups that have offsets for a
 *       {@link OffsetSyncPlan#syncableTopics syncable} topic, read their offsets there, and the log start offset and
 *       high watermark (ListOffsets, read_uncommitted) of the partitions concerned.</li>
 *   <li>Plan each group; write the changed offsets with AlterConsumerGroupOffsets or AlterShareGroupOffsets (which
 *       the group coordinator refuses for a group that gained members since it was described, UNKNOWN_MEMBER_ID or
 *       GROUP_NOT_EMPTY, so a consumer starting meanwhile wins); record the group's last sync in ZooKeeper
 *       ({@code /mirror_groups/<mirror>/<group>}) for describe; remove the records of groups no longer selected or
 *       no longer on the source.</li>
 * </ol>
 * A source or destination that does not answer ends the pass with one log line; the next pass starts over. A group
 * whose write fails keeps its previous record, so describe shows how old its offsets are. A cluster that does not
 * serve share groups (UNSUPPORTED_VERSION: {@code share.version} 0, or a Kafka before 4.1) leaves share groups out of
 * the pass, with one INFO until that changes; consumer groups are synced as before.
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
    /** Per mirror, source groups whose ID is another type of group here: logged at WARN when one is added. */
    private final Map<String, Set<String>> typeConflicts = new ConcurrentHashMap<>();
    /** Per mirror, the types of group a cluster does not serve, with why: logged at INFO when this changes. */
    private final Map<String, Map<GroupSyncRecord.Type, String>> unsupported = new ConcurrentHashMap<>();

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
        typeConflicts.keySet().retainAll(mirrors);
        unsupported.keySet().retainAll(mirrors);
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
        } catch (TimeoutException e) {
            metrics.onGroupOffsetSyncError(mirror.name());
            log.info("[Mirror {}] group offset sync skipped: a cluster did not answer within {} ms", mirror.name(),
                    TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // broad: ZooKeeper errors on the sync records (Curator declares Exception): the next pass rewrites them
            metrics.onGroupOffsetSyncError(mirror.name());
            log.warn("[Mirror {}] group offset sync failed: {}", mirror.name(), e.toString(), e);
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
        Map<String, GroupSyncRecord.Type> groups = selectedGroups(mirror, selection, source);
        Set<String> stale = store.groupSyncIds(mirror.name());
        stale.removeAll(groups.keySet());
        store.removeGroupSyncs(mirror.name(), stale);

        Pass pass = new Pass(mirror.name(), source, destination,
                OffsetSyncPlan.syncableTopics(mirror.name(), metadata.image().mirrors()));
        Map<GroupSyncRecord.Type, Map<String, Map<TopicPartition, CommittedOffset>>> sourceOffsets =
                new EnumMap<>(GroupSyncRecord.Type.class);
        for (GroupSyncRecord.Type type : GroupSyncRecord.Type.values()) {
            Set<String> ofType = new TreeSet<>();
            groups.forEach((g, t) -> {
                if (t == type) {
                    ofType.add(g);
                }
            });
            if (!ofType.isEmpty()) {
                pass.readSource(GroupOffsets.of(type, TIMEOUT_MS), ofType)
                        .filter(offsets -> !offsets.isEmpty())
                        .ifPresent(offsets -> sourceOffsets.put(type, offsets));
            }
        }
        if (sourceOffsets.isEmpty()) {
            return pass.complete;
        }
        Map<String, Map<TopicPartition, CommittedOffset>> allOffsets = new HashMap<>();
        sourceOffsets.values().forEach(allOffsets::putAll);
        Map<TopicPartition, DestinationPartition> held = destinationPartitions(destination, allOffsets);
        Map<String, GroupListing> here = new HashMap<>();
        destination.listGroups().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .forEach(g -> here.put(g.groupId(), g));
        sourceOffsets.forEach((type, offsets) -> pass.syncToDestination(GroupOffsets.of(type, TIMEOUT_MS), offsets,
                here, held));
        log.debug("[Mirror {}] group offset sync: {} group(s) with offsets for synced topics, {} offset(s) written",
                mirror.name(), allOffsets.size(), pass.written);
        return pass.complete;
    }

    /** One pass of one mirror: its clients, the topics it syncs, and whether every group could be handled. */
    private final class Pass {
        final String mirror;
        final Admin source;
        final Admin destination;
        final Set<String> syncable;
        boolean complete = true;
        int written;

        Pass(String mirror, Admin source, Admin destination, Set<String> syncable) {
            this.mirror = mirror;
            this.source = source;
            this.destination = destination;
            this.syncable = syncable;
        }

        /**
         * The groups' source offsets for syncable topics, by group (groups without any left out); empty if the
         * source does not serve this type of group.
         */
        Optional<Map<String, Map<TopicPartition, CommittedOffset>>> readSource(GroupOffsets access,
                                                                                 Set<String> groups)
                throws InterruptedException {
            Map<String, Map<TopicPartition, CommittedOffset>> out = new HashMap<>();
            for (List<String> batch : batches(groups)) {
                GroupOffsets.PerGroup<Map<TopicPartition, CommittedOffset>> offsets = access.readSource(source, batch);
                for (String group : batch) {
                    try {
                        Map<TopicPartition, CommittedOffset> relevant = OffsetSyncPlan.relevantOffsets(
                                offsets.get(group), syncable);
                        if (!relevant.isEmpty()) {
                            out.put(group, relevant);
                        }
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof UnsupportedVersionException) {
                            onUnsupported(mirror, access.type(), "the source", e.getCause());
                            return Optional.empty();
                        }
                        log.info("[Mirror {}] could not read the source offsets of {} {}: {}", mirror,
                                noun(access.type()), group, Failures.rootMessage(e));
                        complete = false;
                    } catch (TimeoutException e) {
                        log.info("[Mirror {}] could not read the source offsets of {} {} within {} ms", mirror,
                                noun(access.type()), group, TIMEOUT_MS);
                        complete = false;
                    }
                }
            }
            return Optional.of(out);
        }

        /**
         * Plans and writes each group on the destination. {@code here}: the destination's groups, so that a group ID
         * used there by another type of group is left alone; {@code held}: what the destination holds.
         */
        void syncToDestination(GroupOffsets access, Map<String, Map<TopicPartition, CommittedOffset>> offsets,
                               Map<String, GroupListing> here, Map<TopicPartition, DestinationPartition> held) {
            Set<String> candidates = new TreeSet<>();
            for (String group : offsets.keySet()) {
                if (!typeConflict(mirror, access.type(), group, here.get(group))) {
                    candidates.add(group);
                }
            }
            try {
                for (List<String> batch : batches(candidates)) {
                    Map<String, DestinationGroup> destinationGroups = destinationGroups(access, batch, offsets);
                    for (String group : batch) {
                        if (!destinationGroups.containsKey(group)) {
                            continue;
                        }
                        GroupPlan plan = OffsetSyncPlan.planGroup(group, offsets.get(group), syncable,
                                destinationGroups.get(group), held);
                        try {
                            if (apply(mirror, access, plan, destination)) {
                                written += plan.writes().size();
                            }
                        } catch (GroupWriteFailed e) {
                            complete = false; // logged with why; the group keeps its previous record
                        }
                    }
                }
                onSupported(mirror, access.type());
            } catch (Unsupported e) {
                onUnsupported(mirror, access.type(), "this cluster", e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                complete = false;
            } catch (Exception e) {
                // broad: ZooKeeper errors on the sync records (Curator declares Exception): the next pass rewrites them
                log.warn("[Mirror {}] {} offset sync failed; the next pass tries again", mirror, noun(access.type()), e);
                complete = false;
            }
        }

        /**
         * How the destination describes each group and what it holds for the partitions concerned; a group it could
         * not describe is left out (not knowing whether it is active there, nothing is written for it).
         */
        private Map<String, DestinationGroup> destinationGroups(
                GroupOffsets access, List<String> groups, Map<String, Map<TopicPartition, CommittedOffset>> offsets)
                throws InterruptedException, Unsupported {
            GroupOffsets.PerGroup<DestinationGroup> described = access.describeDestination(destination, groups,
                    offsets);
            Map<String, DestinationGroup> out = new HashMap<>();
            for (String group : groups) {
                try {
                    out.put(group, described.get(group));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof GroupIdNotFoundException) {
                        out.put(group, DestinationGroup.absent());
                    } else if (e.getCause() instanceof UnsupportedVersionException) {
                        throw new Unsupported(e.getCause());
                    } else {
                        log.info("[Mirror {}] could not describe {} {} on this cluster; not synced this time: {}",
                                mirror, noun(access.type()), group, Failures.rootMessage(e));
                    }
                } catch (TimeoutException e) {
                    log.info("[Mirror {}] could not describe {} {} on this cluster within {} ms; not synced this "
                            + "time", mirror, noun(access.type()), group, TIMEOUT_MS);
                }
            }
            return out;
        }
    }

    /** This cluster does not serve the type of group (share groups at share.version 0). */
    private static final class Unsupported extends Exception {
        Unsupported(Throwable cause) {
            super(cause.getMessage(), cause, false, false);
        }
    }

    /** A group's offsets could not be written (other than because it gained members here). */
    private static final class GroupWriteFailed extends Exception {
        GroupWriteFailed(String group, Throwable cause) {
            super("could not write the offsets of group " + group, cause, false, false);
        }
    }

    /** Writes a SYNC plan's offsets and records the sync; false if the group was skipped or the write refused. */
    private boolean apply(String mirror, GroupOffsets access, GroupPlan plan, Admin destination) throws Exception {
        Set<String> active = activeHere.computeIfAbsent(mirror, m -> new HashSet<>());
        String what = noun(access.type()) + " " + plan.groupId();
        if (plan.outcome() == OffsetSyncPlan.Outcome.SKIPPED_ACTIVE) {
            if (active.add(plan.groupId())) {
                log.info("[Mirror {}] {} is no longer synced from the source while {}", mirror, what, plan.reason());
            }
            return false;
        }
        if (active.remove(plan.groupId())) {
            log.info("[Mirror {}] {} has no members on this cluster any more; syncing it from the source again",
                    mirror, what);
        }
        if (plan.outcome() != OffsetSyncPlan.Outcome.SYNC) {
            log.debug("[Mirror {}] {} not synced: {}", mirror, what, plan.reason());
            return false;
        }
        if (plan.offsetsSynced() == 0) {
            return false;
        }
        if (!plan.writes().isEmpty()) {
            try {
                access.write(destination, plan.groupId(), plan.writes());
            } catch (ExecutionException e) {
                if (access.gainedMembers(e.getCause())) {
                    log.info("[Mirror {}] {} gained members on this cluster; its offsets are theirs now", mirror,
                            what);
                    return false;
                }
                if (e.getCause() instanceof UnsupportedVersionException) {
                    throw new Unsupported(e.getCause());
                }
                log.info("[Mirror {}] could not write the offsets of {}: {}", mirror, what, Failures.rootMessage(e));
                throw new GroupWriteFailed(plan.groupId(), e.getCause());
            }
            Map<String, Long> written = new TreeMap<>();
            plan.writes().forEach((tp, o) -> written.put(tp.toString(), o.offset()));
            log.info("[Mirror {}] {}: wrote {} {} from the source {} ({} of {} partitions clamped to what this "
                    + "cluster holds)", mirror, what, written.size(), access.type() == GroupSyncRecord.Type.SHARE
                    ? "start offset(s)" : "offset(s)", written, plan.offsetsClamped(), plan.offsetsSynced());
        }
        store.recordGroupSync(mirror, new GroupSyncRecord(plan.groupId(), access.type(), time.milliseconds(),
                plan.offsetsSynced(), plan.offsetsClamped()));
        return !plan.writes().isEmpty();
    }

    /**
     * True if {@code groupId}, a group of {@code type} on the source, is another type of group on this cluster
     * ({@code here}: its listing, null if it has none): Kafka's coordinators refuse the other type's offset writes
     * for it (GROUP_ID_NOT_FOUND "is not a share group", INVALID_GROUP_TYPE). Logged at WARN when it starts.
     */
    private boolean typeConflict(String mirror, GroupSyncRecord.Type type, String groupId, GroupListing here) {
        Set<String> conflicts = typeConflicts.computeIfAbsent(mirror, m -> new HashSet<>());
        if (here == null || GroupSelection.typeOf(here).equals(Optional.of(type))) {
            if (conflicts.remove(groupId)) {
                log.info("[Mirror {}] group ID {} is free of its other use on this cluster; syncing it as a {}",
                        mirror, groupId, noun(type));
            }
            return false;
        }
        if (conflicts.add(groupId)) {
            log.warn("[Mirror {}] {} {} of the source is not synced: this cluster has a group of that ID of type {}{}",
                    mirror, noun(type), groupId, here.type().map(Enum::name).orElse("unknown"),
                    here.protocol().isEmpty() ? "" : " (protocol type " + here.protocol() + ")");
        }
        return true;
    }

    /** Logs once (per mirror, type and reason) that a cluster does not serve a type of group: skipped each pass. */
    private void onUnsupported(String mirror, GroupSyncRecord.Type type, String where, Throwable cause) {
        String reason = where + " does not serve " + noun(type) + "s (" + cause.getMessage() + ")";
        Map<GroupSyncRecord.Type, String> reasons = unsupported.computeIfAbsent(mirror,
                m -> new ConcurrentHashMap<>());
        if (!reason.equals(reasons.put(type, reason))) {
            log.info("[Mirror {}] {}s are not synced while {}{}", mirror, noun(type), reason,
                    type == GroupSyncRecord.Type.SHARE ? ": share.version must be 1 or more on both clusters" : "");
        }
    }

    private void onSupported(String mirror, GroupSyncRecord.Type type) {
        Map<GroupSyncRecord.Type, String> reasons = unsupported.get(mirror);
        if (reasons != null && reasons.remove(type) != null) {
            log.info("[Mirror {}] {}s are synced again: both clusters serve them", mirror, noun(type));
        }
    }

    private static String noun(GroupSyncRecord.Type type) {
        return type == GroupSyncRecord.Type.SHARE ? "share group" : "group";
    }

    /**
     * The source's groups selected by the mirror's patterns, with their type ({@link GroupSelection#typeOf}:
     * consumer and share groups). Listed without a type filter, which sources before ListGroups v5 do not support.
     */
    private Map<String, GroupSyncRecord.Type> selectedGroups(MirrorDefinition mirror, GroupSelection selection,
                                                             Admin source) throws Exception {
        Map<String, GroupSyncRecord.Type> out = new TreeMap<>();
        for (GroupListing g : source.listGroups().all().get(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            Optional<GroupSyncRecord.Type> type = GroupSelection.typeOf(g);
            if (type.isPresent() && selection.matches(g.groupId())) {
                out.put(g.groupId(), type.get());
            }
        }
        if (out.size() > MAX_GROUPS_PER_PASS) {
            log.warn("[Mirror {}] {} source groups match {}; syncing the first {} by name", mirror.name(), out.size(),
                    mirror.groupIncludePatterns(), MAX_GROUPS_PER_PASS);
            Map<String, GroupSyncRecord.Type> capped = new TreeMap<>();
            for (Map.Entry<String, GroupSyncRecord.Type> g : out.entrySet()) {
                if (capped.size() == MAX_GROUPS_PER_PASS) {
                    break;
                }
                capped.put(g.getKey(), g.getValue());
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
        } catch (ExecutionException | TimeoutException e) {
            return Optional.empty(); // leader unknown, or not there yet: left for the next pass
        }
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
