package io.twinlog.mirror.runtime;

import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which of a source topic's configs a mirror topic copies ({@link MirrorTopicStarter#copied}). */
@Timeout(10)
class CopiedTopicConfigsTest {

    @Test
    void copiesTheSourcesOwnConfigsThatThisClusterKnows() {
        Set<String> notCopied = new TreeSet<>();
        Map<String, String> copied = MirrorTopicStarter.copied(new Config(List.of(
                topicConfig("retention.ms", "100002"),
                topicConfig("cleanup.policy", "compact"),
                // Kafka 2.x/3.x operators set it per topic; Kafka 4.4 removed it, and it would fail the creation
                topicConfig("message.format.version", "2.8-IV1"),
                // the destination's own durability settings are never copied
                topicConfig("min.insync.replicas", "2"),
                // broker defaults and static values are the source cluster's, not the topic's
                new ConfigEntry("segment.bytes", "1073741824", ConfigEntry.ConfigSource.DEFAULT_CONFIG, false,
                        false, List.of(), ConfigEntry.ConfigType.INT, null))), notCopied);
        assertEquals(Map.of("retention.ms", "100002", "cleanup.policy", "compact"), copied);
        assertEquals(Set.of("message.format.version"), notCopied);
    }

    private static ConfigEntry topicConfig(String name, String value) {
        return new ConfigEntry(name, value, ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, false, false, List.of(),
                ConfigEntry.ConfigType.STRING, null);
    }
}
