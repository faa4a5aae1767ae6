package io.twinlog.storage;

import io.twinlog.common.BrokerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.storage.internals.log.CleanerConfig;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the log store needs from the broker configuration; a plain value so storage does not depend on the server.
 *
 * @param defaultTopicConfigs the broker's defaults of topic configs, by topic config name
 *                            ({@link BrokerConfig#defaultTopicConfigs()})
 * @param cleanerEnable       {@code log.cleaner.enable}: without it Kafka's LogManager has no cleaner at all
 * @param cleaner             the cleaner's settings, changeable while the store runs
 */
public record LogStoreConfig(
        int brokerId,
        List<File> logDirs,
        Map<String, String> defaultTopicConfigs,
        long retentionCheckIntervalMs,
        long flushCheckMs,
        long highWatermarkCheckpointIntervalMs,
        boolean cleanerEnable,
        CleanerSettings cleaner,
        int producerIdExpirationMs,
        int producerIdExpirationCheckIntervalMs,
        int transactionMaxTimeoutMs,
        // transaction.partition.verification.enable (KIP-890): a transaction's batch must carry its verification
        boolean transactionVerificationEnable,
        int backgroundThreads,
        long initialTaskDelayMs) {

    /**
     * The log cleaner's settings that Kafka's {@code LogCleaner} takes again while it runs: the
     * {@code log.cleaner.*} keys of its {@code RECONFIGURABLE_CONFIGS} and {@code message.max.bytes}, the largest
     * batch it reads and writes. {@code log.cleaner.enable} is not among them: Kafka never starts or stops the cleaner
     * of a running broker.
     *
     * @param dedupeBufferLoadFactor {@code log.cleaner.io.buffer.load.factor}
     * @param maxMessageSize         {@code message.max.bytes}
     * @throws ConfigException with Kafka's message, when a cleaner thread would get 1 MiB or less of the dedupe
     *                         buffer (a Kafka broker refuses to start then), or with less than one thread
     */
    public record CleanerSettings(int threads, long dedupeBufferSize, double dedupeBufferLoadFactor, int ioBufferSize,
                                  double maxIoBytesPerSecond, long backoffMs, int maxMessageSize) {
        public CleanerSettings {
            if (threads < 1) {
                // Kafka 4.4 would divide by zero on its per-thread rule below; its dynamic check's message says why
                throw new ConfigException("Log cleaner threads should be at least 1");
            }
            if (dedupeBufferSize / threads <= 1024 * 1024) {
                throw new ConfigException(BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE
                        + " must be at least 1MB per cleaner thread.");
            }
        }

        /** The settings {@code config} gives. */
        public static CleanerSettings from(BrokerConfig config) {
            return new CleanerSettings(config.logCleanerThreads(), config.logCleanerDedupeBufferSize(),
                    config.logCleanerDedupeBufferLoadFactor(), config.logCleanerIoBufferSize(),
                    config.logCleanerIoMaxBytesPerSecond(), config.logCleanerBackoffMs(), config.messageMaxBytes());
        }

        /** Kafka's form of these settings, for a cleaner that is {@code enabled} or not. */
        CleanerConfig toKafka(boolean enabled) {
            return new CleanerConfig(threads, dedupeBufferSize, dedupeBufferLoadFactor, ioBufferSize, maxMessageSize,
                    maxIoBytesPerSecond, backoffMs, enabled);
        }

        /** Whether {@code other} differs in a setting only the cleaner uses (not {@code message.max.bytes}). */
        boolean cleanerOnlySettingsDiffer(CleanerSettings other) {
            return !withMaxMessageSize(0).equals(other.withMaxMessageSize(0));
        }

        /** "key old -> new" for every setting that differs from {@code before}, by broker config name. */
        String changesFrom(CleanerSettings before) {
            List<String> out = new ArrayList<>();
            change(out, BrokerConfig.LOG_CLEANER_THREADS, before.threads, threads);
            change(out, BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE, before.dedupeBufferSize, dedupeBufferSize);
            change(out, BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR, before.dedupeBufferLoadFactor,
                    dedupeBufferLoadFactor);
            change(out, BrokerConfig.LOG_CLEANER_IO_BUFFER_SIZE, before.ioBufferSize, ioBufferSize);
            change(out, BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND, before.maxIoBytesPerSecond,
                    maxIoBytesPerSecond);
            change(out, BrokerConfig.LOG_CLEANER_BACKOFF_MS, before.backoffMs, backoffMs);
            change(out, BrokerConfig.MESSAGE_MAX_BYTES, before.maxMessageSize, maxMessageSize);
            return out.isEmpty() ? "unchanged" : String.join(", ", out);
        }

        private static void change(List<String> out, String key, Object before, Object after) {
            if (!before.equals(after)) {
                out.add(key + " " + before + " -> " + after);
            }
        }

        private CleanerSettings withMaxMessageSize(int size) {
            return new CleanerSettings(threads, dedupeBufferSize, dedupeBufferLoadFactor, ioBufferSize,
                    maxIoBytesPerSecond, backoffMs, size);
        }
    }
}
