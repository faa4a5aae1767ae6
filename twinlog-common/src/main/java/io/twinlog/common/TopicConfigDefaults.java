package io.twinlog.common;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which broker keys are the defaults of which topic configs, and their values in the topic-config vocabulary:
 * the broker key is Kafka's synonym ({@link ServerTopicConfigSynonyms}), and {@code retention.ms} comes from
 * whichever of Kafka's three {@code log.retention.*} keys is set. Split from {@link BrokerConfig}, which exposes it
 * as {@link BrokerConfig#defaultTopicConfigs()} and {@link BrokerConfig#brokerKeyForTopicKey(String)}. Stateless.
 */
final class TopicConfigDefaults {
    /** Topic configs whose broker default is a broker key (their synonym), {@code retention.ms} aside. */
    private static final List<String> TOPIC_KEYS_WITH_BROKER_DEFAULT = List.of(TopicConfig.SEGMENT_BYTES_CONFIG,
            TopicConfig.RETENTION_BYTES_CONFIG, TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG,
            TopicConfig.FLUSH_MS_CONFIG, TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.SEGMENT_MS_CONFIG,
            TopicConfig.MAX_MESSAGE_BYTES_CONFIG, TopicConfig.COMPRESSION_TYPE_CONFIG,
            TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, TopicConfig.UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG,
            TopicConfig.SEGMENT_INDEX_BYTES_CONFIG, TopicConfig.INDEX_INTERVAL_BYTES_CONFIG,
            TopicConfig.DELETE_RETENTION_MS_CONFIG, TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG,
            TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG, TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG,
            TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, TopicConfig.PREALLOCATE_CONFIG,
            TopicConfig.FILE_DELETE_DELAY_MS_CONFIG);

    private TopicConfigDefaults() {
    }

    /**
     * The broker-level defaults of topic configs, keyed by topic config name ({@code segment.bytes}, ...),
     * containing only the keys the operator set ({@code retention.ms} from whichever of Kafka's three
     * {@code log.retention.*} keys is set), in Kafka's canonical form ({@code compact,delete}).
     *
     * @param values         the broker's parsed values
     * @param set            the broker keys the operator set
     * @param logRetentionMs the retention Kafka's precedence of the three {@code log.retention.*} keys gives
     */
    static Map<String, String> of(AbstractConfig values, Set<String> set, long logRetentionMs) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String topicKey : TOPIC_KEYS_WITH_BROKER_DEFAULT) {
            String brokerKey = ServerTopicConfigSynonyms.serverSynonym(topicKey);
            if (set.contains(brokerKey)) {
                out.put(topicKey, ConfigDef.convertToString(values.values().get(brokerKey), values.typeOf(brokerKey)));
            }
        }
        if (set.contains(BrokerConfig.LOG_RETENTION_MS) || set.contains(BrokerConfig.LOG_RETENTION_MINUTES)
                || set.contains(BrokerConfig.LOG_RETENTION_HOURS)) {
            out.put(TopicConfig.RETENTION_MS_CONFIG, Long.toString(logRetentionMs));
        }
        return out;
    }

    /** Broker key for a topic config key, for DescribeConfigs synonyms; empty if there is none. */
    static Optional<String> brokerKeyForTopicKey(String topicKey) {
        if (TopicConfig.RETENTION_MS_CONFIG.equals(topicKey)) {
            return Optional.of(BrokerConfig.LOG_RETENTION_MS);
        }
        return TOPIC_KEYS_WITH_BROKER_DEFAULT.contains(topicKey)
                ? Optional.of(ServerTopicConfigSynonyms.serverSynonym(topicKey)) : Optional.empty();
    }
}
