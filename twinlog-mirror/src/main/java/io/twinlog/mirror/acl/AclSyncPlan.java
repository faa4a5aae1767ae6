package io.twinlog.mirror.acl;

import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
        return toCreate(source, destination, rules, "", Map.of());
    }

    /**
     * {@link #toCreate(Collection, Collection, List)} for a mirror whose topics get {@code topicPrefix} here
     * (decision 125): the rules select among the source's ACLs as they are, and each selected topic ACL is created
     * on the topic's name here. A literal ACL of a topic the mirror has goes to that topic's name here, from
     * {@code destinationOf} (the same mapping as the group offsets': B's {@code west.orders} failed back into A's
     * {@code orders} lands on {@code orders}); any other literal {@code orders} as {@code west.orders}, a prefixed
     * {@code ord} as a prefixed {@code west.ord}. A literal {@code *} (every topic) stays every topic. Other
     * resources keep their names.
     *
     * @param destinationOf the name each of the mirror's source topics has here, by source name
     */
    public static List<AclBinding> toCreate(Collection<AclBinding> source, Collection<AclBinding> destination,
                                            List<AclSyncRule> rules, String topicPrefix,
                                            Map<String, String> destinationOf) {
        Set<AclBinding> present = new HashSet<>(destination);
        return source.stream()
                .filter(acl -> acl.pattern().resourceType() != ResourceType.UNKNOWN)
                .filter(acl -> rules.stream().anyMatch(r -> r.matches(acl)))
                .map(acl -> onDestinationTopics(acl, topicPrefix, destinationOf))
                .filter(acl -> !present.contains(acl))
                .distinct()
                .toList();
    }

    /** {@code acl} with its topic resource renamed as the mirror names topics here, when it names topics. */
    static AclBinding onDestinationTopics(AclBinding acl, String topicPrefix, Map<String, String> destinationOf) {
        ResourcePattern pattern = acl.pattern();
        if (pattern.resourceType() == ResourceType.TOPIC && pattern.patternType() == PatternType.LITERAL
                && destinationOf.containsKey(pattern.name())) {
            return new AclBinding(new ResourcePattern(ResourceType.TOPIC, destinationOf.get(pattern.name()),
                    PatternType.LITERAL), acl.entry());
        }
        if (topicPrefix.isEmpty() || pattern.resourceType() != ResourceType.TOPIC
                || pattern.patternType() == PatternType.LITERAL && ResourcePattern.WILDCARD_RESOURCE.equals(
                pattern.name())) {
            return acl;
        }
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topicPrefix + pattern.name(),
                pattern.patternType()), acl.entry());
    }
}
