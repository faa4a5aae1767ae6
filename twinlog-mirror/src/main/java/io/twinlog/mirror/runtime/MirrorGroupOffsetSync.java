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
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.EnumMap;
import java.util.HashMap;
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
 *       mirror's patterns (at most {@value GroupSyncReads#MAX_GROUPS_PER_PASS} in all); read their committed offsets or
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
    private static final Logger log = LoggerFactory.getLogger(MirrorGroupOffsetSync.class);
    static final int TIMEOUT_MS = 15_000;

    private final MirrorStore store;
    private final MetadataWatcher metadata;
    private final Supplier<Optional<Map<String, Object>>> localClients;
    private final MirrorMetrics metrics;
    private final Time time;
    /** Per mirror; each mirror's passes run on its own thread, one at a time (MirrorMetadataSync). */
    private final Map<String, Long> lastPassMs = new ConcurrentHashMap<>();
    /** What is said once per mirror: groups active here, group IDs of another type here, types not served. */
    private final GroupSyncNotices notices = new GroupSyncNotices();

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
        notices.retainMirrors(mirrors);
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
        Map<String, GroupSyncRecord.Type> groups = GroupSyncReads.selectedGroups(mirror, selection, source);
        Set<String> stale = store.groupSyncIds(mirror.name());
        stale.removeAll(groups.keySet());
        store.removeGroupSyncs(mirror.name(), stale);

        Pass pass = new Pass(mirror.name(), source, destination,
                OffsetSyncPlan.syncableTopics(mirror.name(), metadata.image().mirrors()),
                OffsetSyncPlan.destinationTopics(mirror.name(), metadata.image().mirrors()));
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
        Map<TopicPartition, DestinationPartition> held = GroupSyncReads.destinationPartitions(destination,
                allOffsets);
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
        /** The topics synced, by their names here. */
        final Set<String> syncable;
        /** Each of the mirror's source topics' name here: the source's offsets are written there. */
        final Map<String, String> destinationOf;
        boolean complete = true;
        int written;

        Pass(String mirror, Admin source, Admin destination, Set<String> syncable, Map<String, String> destinationOf) {
            this.mirror = mirror;
            this.source = source;
            this.destination = destination;
            this.syncable = syncable;
            this.destinationOf = destinationOf;
        }

        /**
         * The groups' source offsets for syncable topics, by group (groups without any left out); empty if the
         * source does not serve this type of group.
         */
        Optional<Map<String, Map<TopicPartition, CommittedOffset>>> readSource(GroupOffsets access,
                                                                                 Set<String> groups)
                throws InterruptedException {
            Map<String, Map<TopicPartition, CommittedOffset>> out = new HashMap<>();
            for (List<String> batch : GroupSyncReads.batches(groups)) {
                GroupOffsets.PerGroup<Map<TopicPartition, CommittedOffset>> offsets = access.readSource(source, batch);
                for (String group : batch) {
                    try {
                        Map<TopicPartition, CommittedOffset> relevant = OffsetSyncPlan.relevantOffsets(
                                OffsetSyncPlan.onDestinationTopics(offsets.get(group), destinationOf), syncable);
                        if (!relevant.isEmpty()) {
                            out.put(group, relevant);
                        }
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof UnsupportedVersionException) {
                            notices.onUnsupported(mirror, access.type(), "the source", e.getCause());
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
                if (!notices.typeConflict(mirror, access.type(), group, here.get(group))) {
                    candidates.add(group);
                }
            }
            try {
                for (List<String> batch : GroupSyncReads.batches(candidates)) {
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
                notices.onSupported(mirror, access.type());
            } catch (Unsupported e) {
                notices.onUnsupported(mirror, access.type(), "this cluster", e.getCause());
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
        String what = noun(access.type()) + " " + plan.groupId();
        if (plan.outcome() == OffsetSyncPlan.Outcome.SKIPPED_ACTIVE) {
            notices.onActiveHere(mirror, plan.groupId(), what, plan.reason());
            return false;
        }
        notices.onNotActiveHere(mirror, plan.groupId(), what);
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

    private static String noun(GroupSyncRecord.Type type) {
        return GroupSyncNotices.noun(type);
    }

    private static Admin localAdmin(String mirror, Map<String, Object> local) {
        return ShortLivedAdmin.local("twinlog-mirror-groups-" + mirror, local, TIMEOUT_MS);
    }
}
