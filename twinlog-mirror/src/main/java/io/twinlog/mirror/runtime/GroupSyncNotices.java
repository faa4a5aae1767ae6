package io.twinlog.mirror.runtime;

import io.twinlog.mirror.groups.GroupSelection;
import io.twinlog.mirror.store.GroupSyncRecord;
import org.apache.kafka.clients.admin.GroupListing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the group offset sync says once rather than at every pass, per mirror: a group skipped while it has members
 * on this cluster (INFO when it starts and when it ends), a source group whose ID is another type of group here
 * (WARN when it starts), a cluster that does not serve a type of group (INFO when it starts, when its reason changes
 * and when it ends). Each method returns whether it logged. Called from {@link MirrorMetadataSync}'s per-mirror
 * threads, one pass of a mirror at a time.
 */
final class GroupSyncNotices {
    private static final Logger log = LoggerFactory.getLogger(MirrorGroupOffsetSync.class);

    /** Per mirror, groups skipped in the last pass because they are active here. */
    private final Map<String, Set<String>> activeHere = new ConcurrentHashMap<>();
    /** Per mirror, source groups whose ID is another type of group here. */
    private final Map<String, Set<String>> typeConflicts = new ConcurrentHashMap<>();
    /** Per mirror, the types of group a cluster does not serve, with why. */
    private final Map<String, Map<GroupSyncRecord.Type, String>> unsupported = new ConcurrentHashMap<>();

    static String noun(GroupSyncRecord.Type type) {
        return type == GroupSyncRecord.Type.SHARE ? "share group" : "group";
    }

    /** Forgets the mirrors not in {@code mirrors} (deleted). */
    void retainMirrors(Set<String> mirrors) {
        activeHere.keySet().retainAll(mirrors);
        typeConflicts.keySet().retainAll(mirrors);
        unsupported.keySet().retainAll(mirrors);
    }

    /** {@code what} (a group of {@code mirror}) is skipped because it has members here; said when it starts. */
    boolean onActiveHere(String mirror, String groupId, String what, String reason) {
        if (activeHere.computeIfAbsent(mirror, m -> new HashSet<>()).add(groupId)) {
            log.info("[Mirror {}] {} is no longer synced from the source while {}", mirror, what, reason);
            return true;
        }
        return false;
    }

    /** {@code what} is not skipped for members here (any more); said when it was. */
    boolean onNotActiveHere(String mirror, String groupId, String what) {
        Set<String> active = activeHere.get(mirror);
        if (active != null && active.remove(groupId)) {
            log.info("[Mirror {}] {} has no members on this cluster any more; syncing it from the source again",
                    mirror, what);
            return true;
        }
        return false;
    }

    /**
     * True if {@code groupId}, a group of {@code type} on the source, is another type of group on this cluster
     * ({@code here}: its listing, null if it has none): Kafka's coordinators refuse the other type's offset writes
     * for it (GROUP_ID_NOT_FOUND "is not a share group", INVALID_GROUP_TYPE). Logged at WARN when it starts.
     */
    boolean typeConflict(String mirror, GroupSyncRecord.Type type, String groupId, GroupListing here) {
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
    boolean onUnsupported(String mirror, GroupSyncRecord.Type type, String where, Throwable cause) {
        String reason = where + " does not serve " + noun(type) + "s (" + cause.getMessage() + ")";
        Map<GroupSyncRecord.Type, String> reasons = unsupported.computeIfAbsent(mirror,
                m -> new ConcurrentHashMap<>());
        if (!reason.equals(reasons.put(type, reason))) {
            log.info("[Mirror {}] {}s are not synced while {}{}", mirror, noun(type), reason,
                    type == GroupSyncRecord.Type.SHARE ? ": share.version must be 1 or more on both clusters" : "");
            return true;
        }
        return false;
    }

    /** Both clusters serve the type of group (again); said when one did not. */
    boolean onSupported(String mirror, GroupSyncRecord.Type type) {
        Map<GroupSyncRecord.Type, String> reasons = unsupported.get(mirror);
        if (reasons != null && reasons.remove(type) != null) {
            log.info("[Mirror {}] {}s are synced again: both clusters serve them", mirror, noun(type));
            return true;
        }
        return false;
    }
}
