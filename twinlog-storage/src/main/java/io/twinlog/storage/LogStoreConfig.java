package io.twinlog.storage;

import java.io.File;
import java.util.List;
import java.util.Map;

/** What the log store needs from the broker configuration; a plain value so storage does not depend on the server. */
public record LogStoreConfig(
        int brokerId,
        List<File> logDirs,
        Map<String, String> defaultTopicConfigs,
        long retentionCheckIntervalMs,
        long flushCheckMs,
        long highWatermarkCheckpointIntervalMs,
        boolean cleanerEnable,
        long cleanerBackoffMs,
        int producerIdExpirationMs,
        int producerIdExpirationCheckIntervalMs,
        int transactionMaxTimeoutMs,
        // transaction.partition.verification.enable (KIP-890): a transactional batch must carry its verification
        boolean transactionVerificationEnable,
        int backgroundThreads,
        long initialTaskDelayMs) {
}
