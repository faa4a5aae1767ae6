package io.twinlog.common;

import org.apache.kafka.common.config.AbstractConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Broker keys as topic-config defaults: only what was set, in Kafka's vocabulary and canonical form. */
@Timeout(10)
class TopicConfigDefaultsTest {
    private static Map<String, String> defaults(Map<String, String> set, long retentionMs) {
        return TopicConfigDefaults.of(new AbstractConfig(BrokerConfig.CONFIG_DEF, set, false), set.keySet(),
                retentionMs);
    }

    @Test
    void nothingSetGivesNoDefaults() {
        assertEquals(Map.of(), defaults(Map.of(), 604_800_000L));
    }

    @Test
    void setKeysAppearUnderTheirTopicNameInCanonicalForm() {
        Map<String, String> set = new LinkedHashMap<>();
        set.put("log.segment.bytes", "1048576");
        set.put("log.cleanup.policy", "compact, delete");
        set.put("num.partitions", "3"); // a broker key that is no topic default
        Map<String, String> out = defaults(set, 0);
        assertEquals(Map.of("segment.bytes", "1048576", "cleanup.policy", "compact,delete"), out);
        assertEquals(List.of("segment.bytes", "cleanup.policy"), List.copyOf(out.keySet()), "Kafka's order");
    }

    @Test
    void anyOfTheThreeRetentionKeysGivesTheRetentionPassedIn() {
        for (String key : List.of("log.retention.ms", "log.retention.minutes", "log.retention.hours")) {
            assertEquals(Map.of("retention.ms", "120000"), defaults(Map.of(key, "2"), 120_000L), key);
        }
    }

    @Test
    void brokerKeysAreKafkasSynonyms() {
        assertEquals(Optional.of("log.roll.ms"), TopicConfigDefaults.brokerKeyForTopicKey("segment.ms"));
        assertEquals(Optional.of("log.retention.ms"), TopicConfigDefaults.brokerKeyForTopicKey("retention.ms"));
        assertEquals(Optional.empty(), TopicConfigDefaults.brokerKeyForTopicKey("message.downconversion.enable"));
        for (String topicKey : Set.of("segment.bytes", "min.insync.replicas", "preallocate")) {
            String brokerKey = TopicConfigDefaults.brokerKeyForTopicKey(topicKey).orElseThrow();
            assertEquals(true, BrokerConfig.CONFIG_DEF.names().contains(brokerKey), brokerKey + " is defined");
        }
    }
}
