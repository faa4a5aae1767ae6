package io.twinlog.mirror.fetcher;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the mirror fetcher knows of the source cluster: partition leaders with their leader epochs, topic IDs, and
 * broker endpoints, as one Metadata response told it, and the topics it answered UNKNOWN_TOPIC_OR_PARTITION for.
 */
record SourceMetadata(Map<TopicPartition, Leader> leaders, Map<String, Uuid> topicIds, Map<Integer, Node> brokers,
                      Set<String> unknownTopics, String clusterId, long fetchedAtMs) {

    record Leader(int brokerId, int leaderEpoch) {
    }

    Optional<Node> leaderNode(TopicPartition tp) {
        Leader l = leaders.get(tp);
        return l == null ? Optional.empty() : Optional.ofNullable(brokers.get(l.brokerId()));
    }
}
