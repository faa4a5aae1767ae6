package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.storage.LogStore;
import io.twinlog.storage.LogStoreConfig;
import org.apache.kafka.server.config.ServerConfigs;

import java.util.Set;

/**
 * The log cleaner live ({@code log.cleaner.threads}, its buffers, I/O rate and backoff, and {@code message.max.bytes},
 * which the cleaner reads too): Kafka's {@code LogCleaner} checks the change (threads at most doubled or halved,
 * a dedupe buffer of at least 1 MB per thread) and restarts its threads with it.
 */
public final class LogCleanerSettings implements BrokerReconfigurable {
    private static final Set<String> KEYS = Set.of(BrokerConfig.LOG_CLEANER_THREADS,
            BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE, BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND,
            BrokerConfig.LOG_CLEANER_IO_BUFFER_SIZE, BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR,
            BrokerConfig.LOG_CLEANER_BACKOFF_MS, ServerConfigs.MESSAGE_MAX_BYTES_CONFIG);
    private final LogStore logs;

    public LogCleanerSettings(LogStore logs) {
        this.logs = logs;
    }

    @Override
    public String name() {
        return "log cleaner";
    }

    @Override
    public boolean reconfigures(String key) {
        return KEYS.contains(key);
    }

    @Override
    public void validateReconfiguration(BrokerConfig current, BrokerConfig next) {
        logs.validateCleanerReconfiguration(LogStoreConfig.CleanerSettings.from(next));
    }

    @Override
    public void reconfigure(BrokerConfig previous, BrokerConfig next) {
        logs.reconfigureCleaner(LogStoreConfig.CleanerSettings.from(next));
    }
}
