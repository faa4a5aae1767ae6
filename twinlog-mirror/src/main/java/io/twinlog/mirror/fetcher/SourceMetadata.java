package io.twinlog.mirror.fetcher;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.MetadataResponse;

import java.util.HashMap;
import java.util.HashSet;
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

    /** What a Metadata answer says, received at {@code fetchedAtMs}. */
    static SourceMetadata from(MetadataResponse response, long fetchedAtMs) {
        Map<TopicPartition, Leader> leaders = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        Set<String> unknown = new HashSet<>();
        Map<Integer, Node> brokers = new HashMap<>();
        for (MetadataResponseData.MetadataResponseBroker b : response.data().brokers()) {
            brokers.put(b.nodeId(), new Node(b.nodeId(), b.host(), b.port()));
        }
        for (MetadataResponseData.MetadataResponseTopic t : response.data().topics()) {
            if (t.errorCode() == Errors.UNKNOWN_TOPIC_OR_PARTITION.code()) {
                unknown.add(t.name());
            }
            if (t.errorCode() != Errors.NONE.code()) {
                continue;
            }
            ids.put(t.name(), t.topicId());
            for (MetadataResponseData.MetadataResponsePartition p : t.partitions()) {
                if (p.leaderId() >= 0) {
                    leaders.put(new TopicPartition(t.name(), p.partitionIndex()),
                            new Leader(p.leaderId(), p.leaderEpoch()));
                }
            }
        }
        return new SourceMetadata(leaders, ids, brokers, unknown, response.data().clusterId(), fetchedAtMs);
    }

    Optional<Node> leaderNode(TopicPartition tp) {
        Leader l = leaders.get(tp);
        return l == null ? Optional.empty() : Optional.ofNullable(brokers.get(l.brokerId()));
    }
}
