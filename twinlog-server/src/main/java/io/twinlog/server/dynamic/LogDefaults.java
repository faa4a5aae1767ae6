package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.storage.LogStore;

/**
 * The broker defaults of topic configs live ({@code log.retention.ms}, {@code message.max.bytes}, ...): every log
 * without its own value for a key takes the new default; a topic's own configs stay as they are.
 */
public final class LogDefaults implements BrokerReconfigurable {
    private final LogStore logs;

    public LogDefaults(LogStore logs) {
        this.logs = logs;
    }

    @Override
    public String name() {
        return "log defaults";
    }

    @Override
    public boolean reconfigures(String key) {
        return DynamicBrokerConfigPolicy.isLogDefault(key);
    }

    @Override
    public void validateReconfiguration(BrokerConfig current, BrokerConfig next) {
        // types and ranges are checked by the policy with Kafka's definitions; nothing depends on this broker's state
    }

    @Override
    public void reconfigure(BrokerConfig previous, BrokerConfig next) {
        logs.reconfigureDefaults(next.defaultTopicConfigs());
    }
}
