package io.twinlog.group;

import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

@Timeout(10)
class GroupCoordinatorInternalConfigsTest {
    @Test
    void kafkasMinutesRuleWithoutTheInternalKey() {
        assertEquals(60_000L, GroupCoordinatorInternalConfigs.coordinatorConfig(Map.of(
                GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_CONFIG, "1")).offsetsRetentionMs());
        assertEquals(7L * 24 * 60 * 60_000, GroupCoordinatorInternalConfigs.coordinatorConfig(Map.of())
                .offsetsRetentionMs());
    }

    @Test
    void theInternalKeyReplacesTheMinutesAndLeavesTheRest() {
        GroupCoordinatorConfig config = GroupCoordinatorInternalConfigs.coordinatorConfig(Map.of(
                GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_CONFIG, "1",
                GroupCoordinatorConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS_CONFIG, "250",
                GroupCoordinatorInternalConfigs.OFFSETS_RETENTION_MS, "4000"));
        assertEquals(4_000L, config.offsetsRetentionMs());
        assertEquals(250L, config.offsetsRetentionCheckIntervalMs());
    }
}
