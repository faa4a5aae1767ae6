package io.twinlog.mirror.groups;

import io.twinlog.mirror.store.GroupSyncRecord;
import io.twinlog.mirror.store.MirrorDefinition;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.common.GroupType;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which groups a mirror syncs: a consumer or share group ({@link #typeOf}) whose ID matches (as a whole) one include
 * pattern and no exclude pattern, like the topic patterns. No include pattern selects no group. Immutable; the
 * patterns were validated when the mirror's configs were set.
 */
public final class GroupSelection {
    private final List<Pattern> include;
    private final List<Pattern> exclude;

    private GroupSelection(List<String> include, List<String> exclude) {
        this.include = include.stream().map(Pattern::compile).toList();
        this.exclude = exclude.stream().map(Pattern::compile).toList();
    }

    public static GroupSelection of(List<String> include, List<String> exclude) {
        return new GroupSelection(include, exclude);
    }

    public static GroupSelection of(MirrorDefinition mirror) {
        return of(mirror.groupIncludePatterns(), mirror.groupExcludePatterns());
    }

    /** True when no group can match (the sync is off). */
    public boolean selectsNothing() {
        return include.isEmpty();
    }

    public boolean matches(String groupId) {
        return include.stream().anyMatch(p -> p.matcher(groupId).matches())
                && exclude.stream().noneMatch(p -> p.matcher(groupId).matches());
    }

    /**
     * The kind of group a ListGroups entry is, for the sync: a consumer group (a classic group of protocol type
     * "consumer", or none — a group that only commits offsets — and a KIP-848 group), a share group, or neither
     * (Connect and other classic protocols, Streams groups, types this client does not know). A listing without a
     * type (ListGroups before v5, from older Kafka sources) is judged by its protocol type alone.
     */
    public static Optional<GroupSyncRecord.Type> typeOf(GroupListing listing) {
        boolean consumerProtocol = listing.protocol().isEmpty() || listing.protocol().equals("consumer");
        if (listing.type().isEmpty()) {
            return consumerProtocol ? Optional.of(GroupSyncRecord.Type.CONSUMER) : Optional.empty();
        }
        GroupType type = listing.type().get();
        if (type == GroupType.CONSUMER || type == GroupType.CLASSIC && consumerProtocol) {
            return Optional.of(GroupSyncRecord.Type.CONSUMER);
        }
        return type == GroupType.SHARE ? Optional.of(GroupSyncRecord.Type.SHARE) : Optional.empty();
    }
}
