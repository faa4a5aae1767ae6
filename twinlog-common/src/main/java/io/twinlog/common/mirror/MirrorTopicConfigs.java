package io.twinlog.common.mirror;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

import java.util.HashMap;
import java.util.Map;

/**
 * Topic configs Twinlog adds to Kafka's (KIP-1279): typed and documented with Kafka's {@link ConfigDef}, validated
 * when set, shown by DescribeConfigs next to Kafka's own, and never copied from a mirror's source.
 */
public final class MirrorTopicConfigs {
    public static final String SUPPORT_UNCLEAN_LEADER_ELECTION = "mirror.support.unclean.leader.election";

    private static final ConfigDef DEFINITION = new ConfigDef()
            .define(SUPPORT_UNCLEAN_LEADER_ELECTION, ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.MEDIUM,
                    "Whether a mirror partition's log truncation (start, failback, recovery from a divergence) waits "
                            + "for every assigned replica, back in the ISR, to apply the truncation point, instead of "
                            + "the ISR only. With it, an unclean leader election later cannot bring back records the "
                            + "truncation removed; a replica that stays away makes the partition FAILED after "
                            + "mirror.state.timeout.ms. Dynamic: a change takes effect at the next truncation.");

    private MirrorTopicConfigs() {
    }

    public static ConfigDef definition() {
        return DEFINITION;
    }

    public static boolean isMirrorTopicConfig(String name) {
        return DEFINITION.names().contains(name);
    }

    /** Validates the Twinlog keys among {@code overrides} (others are Kafka's, validated by Kafka's rules). */
    public static void validate(Map<String, String> overrides) {
        Map<String, String> ours = new HashMap<>();
        overrides.forEach((k, v) -> {
            if (isMirrorTopicConfig(k)) {
                ours.put(k, v);
            }
        });
        DEFINITION.parse(ours);
    }

    /** The effective {@value #SUPPORT_UNCLEAN_LEADER_ELECTION} of a topic's overrides (default false). */
    public static boolean supportsUncleanLeaderElection(Map<String, String> overrides) {
        String value = overrides.get(SUPPORT_UNCLEAN_LEADER_ELECTION);
        if (value == null) {
            return false;
        }
        try {
            return (Boolean) ConfigDef.parseType(SUPPORT_UNCLEAN_LEADER_ELECTION, value.trim(), ConfigDef.Type.BOOLEAN);
        } catch (ConfigException e) {
            return false; // validated when set: only a record written by hand gets here
        }
    }
}
