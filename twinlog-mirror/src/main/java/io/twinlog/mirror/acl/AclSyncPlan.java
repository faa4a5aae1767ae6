package io.twinlog.mirror.acl;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
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
        return toCreate(source, destination, rules, "");
    }

    /**
     * {@link #toCreate(Collection, Collection, List)} for a mirror whose topics get {@code topicPrefix} here
     * (decision 125): the rules select among the source's ACLs as they are, and each selected topic ACL is created
     * on the topic's name here — a literal {@code orders} as {@code west.orders}, a prefixed {@code ord} as a
     * prefixed {@code west.ord}. A literal {@code *} (every topic) stays every topic. Other resources keep their names.
     */
    public static List<AclBinding> toCreate(Collection<AclBinding> source, Collection<AclBinding> destination,
                                            List<AclSyncRule> rules, String topicPrefix) {
        Set<AclBinding> present = new HashSet<>(destination);
        return source.stream()
                .filter(acl -> acl.pattern().resourceType() != ResourceType.UNKNOWN)
                .filter(acl -> rules.stream().anyMatch(r -> r.matches(acl)))
                .map(acl -> onDestinationTopics(acl, topicPrefix))
                .filter(acl -> !present.contains(acl))
                .distinct()
                .toList();
    }

    /** {@code acl} with its topic resource renamed by {@code topicPrefix}, when it names topics. */
    static AclBinding onDestinationTopics(AclBinding acl, String topicPrefix) {
        ResourcePattern pattern = acl.pattern();
        if (topicPrefix.isEmpty() || pattern.resourceType() != ResourceType.TOPIC
                || pattern.patternType() == PatternType.LITERAL && ResourcePattern.WILDCARD_RESOURCE.equals(
                pattern.name())) {
            return acl;
        }
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topicPrefix + pattern.name(),
                pattern.patternType()), acl.entry());
    }
}
