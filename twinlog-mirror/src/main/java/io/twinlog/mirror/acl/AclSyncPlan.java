package io.twinlog.mirror.acl;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one ACL sync pass creates on the destination (issue 13, point 6): the source's ACLs that a rule selects and
 * the destination lacks. Nothing is ever deleted — unlike KIP-1279's prototype, an ACL that exists only on the
 * destination (added there by its operators, or removed on the source since) stays (decision 50) — and ClusterMirror
 * ACLs, which Kafka's admin client sees as an UNKNOWN resource type, are never copied: who may manage a mirror is
 * each cluster's own decision.
 */
public final class AclSyncPlan {
    private AclSyncPlan() {
    }

    public static List<AclBinding> toCreate(Collection<AclBinding> source, Collection<AclBinding> destination,
                                            List<AclSyncRule> rules) {
        Set<AclBinding> present = new HashSet<>(destination);
        return source.stream()
                .filter(acl -> acl.pattern().resourceType() != ResourceType.UNKNOWN)
                .filter(acl -> rules.stream().anyMatch(r -> r.matches(acl)))
                .filter(acl -> !present.contains(acl))
                .distinct()
                .toList();
    }
}
