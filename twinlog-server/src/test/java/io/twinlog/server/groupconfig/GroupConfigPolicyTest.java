package io.twinlog.server.groupconfig;

import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The group config rules (Kafka's, bounded by the broker's keys, and Twinlog's refusals) and the node names. */
@Timeout(30)
class GroupConfigPolicyTest {
    private static GroupConfigPolicy policy(Map<String, String> broker) {
        return new GroupConfigPolicy(GroupCoordinatorConfig.fromProps(broker), broker);
    }

    @Test
    void boundsAreTheBrokersOwn() {
        GroupConfigPolicy wide = policy(Map.of("group.share.max.heartbeat.interval.ms", "20000"));
        wide.validate(Map.of("share.heartbeat.interval.ms", "20000"));
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> policy(Map.of()).validate(Map.of("share.heartbeat.interval.ms", "20000")));
        assertEquals("share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.", e.getMessage());
    }

    @Test
    void kafkasDefinitionErrorsAreInvalidConfigWithKafkasMessage() {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> policy(Map.of()).validate(Map.of("share.record.lock.duration.ms", "10")));
        assertEquals("Invalid value 10 for configuration share.record.lock.duration.ms: Value must be at least 1000",
                e.getMessage());
        Map<String, String> withNull = new HashMap<>();
        withNull.put("share.auto.offset.reset", null);
        assertEquals("Null value not supported for group configs: share.auto.offset.reset", assertThrows(
                InvalidConfigurationException.class, () -> policy(Map.of()).validate(withNull)).getMessage());
    }

    @Test
    void keysOfFeaturesTwinlogLacksAreRefusedAfterKafkasChecks() {
        GroupConfigPolicy policy = policy(Map.of());
        assertTrue(assertThrows(InvalidConfigurationException.class, () -> policy.validate(Map.of(
                "errors.deadletterqueue.copy.record.enable", "true"))).getMessage()
                .contains("Twinlog has no dead-letter queue"));
        // Kafka's own refusal comes first: its message, not Twinlog's
        assertEquals("Invalid value yes for configuration errors.deadletterqueue.copy.record.enable: Expected "
                + "value to be either true or false", assertThrows(InvalidConfigurationException.class,
                () -> policy.validate(Map.of("errors.deadletterqueue.copy.record.enable", "yes"))).getMessage());
        assertThrows(InvalidRequestException.class, () -> GroupConfigPolicy.checkAlterable(""));
    }

    @Test
    void defaultsAreTheBrokersGroupKeys() {
        GroupConfigPolicy policy = policy(Map.of("group.consumer.heartbeat.interval.ms", "7000"));
        assertEquals(7000, policy.effective(Map.of()).consumerHeartbeatIntervalMs().orElseThrow());
        assertEquals(8000, policy.effective(Map.of("consumer.heartbeat.interval.ms", "8000"))
                .consumerHeartbeatIntervalMs().orElseThrow());
    }

    @Test
    void nodeNamesReadBackAsTheGroupIdForAnyId() {
        for (String group : List.of("app", "app/1", ".", "..", "a.b", "ünï code*", "with space+plus", "%2F")) {
            String path = GroupConfigStore.path(group);
            String node = path.substring(path.lastIndexOf('/') + 1);
            assertTrue(!node.isEmpty() && !node.equals(".") && !node.equals(".."), node);
            assertEquals(group, GroupConfigStore.groupOf(node), path);
        }
    }
}
