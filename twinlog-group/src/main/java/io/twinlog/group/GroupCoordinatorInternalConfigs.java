package io.twinlog.group;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.coordinator.group.GroupCoordinatorConfig;

import java.util.Map;

/**
 * Twinlog's internal keys of the hosted group coordinator (decision 121): defined as Kafka defines its internal
 * keys ({@link ConfigDef#defineInternal}), so they are typed and checked at start-up with the coordinator's other
 * keys but left out of docs/configuration.md and the WARN about unknown keys.
 *
 * <p>{@value #OFFSETS_RETENTION_MS} is for tests: Kafka's {@code offsets.retention.minutes} is at least one minute,
 * so a test of offset expiry waited a minute. Set, it replaces that key's value in milliseconds; unset, Kafka's key
 * rules as in Kafka. Stateless.
 */
public final class GroupCoordinatorInternalConfigs {
    /** Committed offsets of an empty group expire after this many milliseconds (replaces the minutes key). */
    public static final String OFFSETS_RETENTION_MS = "internal.offsets.retention.ms";

    public static final ConfigDef CONFIG_DEF = new ConfigDef().defineInternal(OFFSETS_RETENTION_MS, Type.LONG, null,
            GroupCoordinatorInternalConfigs::atLeastOneIfSet, Importance.LOW,
            "Internal, for tests: offsets retention in milliseconds, replacing "
                    + GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_CONFIG + " (whose floor is one minute).");

    private GroupCoordinatorInternalConfigs() {
    }

    /**
     * Kafka's coordinator config from the broker's keys, with the internal keys applied.
     *
     * @throws ConfigException a key with an invalid value (the broker's start-up checks them first)
     */
    static GroupCoordinatorConfig coordinatorConfig(Map<String, ?> props) {
        AbstractConfig kafka = new AbstractConfig(GroupCoordinatorConfig.CONFIG_DEF, props); // logged, as fromProps does
        Long retentionMs = new AbstractConfig(CONFIG_DEF, props, false).getLong(OFFSETS_RETENTION_MS);
        return retentionMs == null ? new GroupCoordinatorConfig(kafka) : new WithRetention(kafka, retentionMs);
    }

    private static void atLeastOneIfSet(String name, Object value) {
        if (value != null && (Long) value < 1) {
            throw new ConfigException(name, value, "must be at least 1");
        }
    }

    /** Kafka's coordinator reads the retention through this method only (OffsetMetadataManager, Kafka 4.4). */
    private static final class WithRetention extends GroupCoordinatorConfig {
        private final long retentionMs;

        WithRetention(AbstractConfig config, long retentionMs) {
            super(config);
            this.retentionMs = retentionMs;
        }

        @Override
        public long offsetsRetentionMs() {
            return retentionMs;
        }
    }
}
