package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.util.Map;

/**
 * What a log dir failure took offline on this broker.
 *
 * @param dir            the failed log dir (absolute path)
 * @param partitions     the partitions whose logs were in it, with their topic IDs
 * @param everyDirFailed it was the last live log dir: the broker cannot serve anything and must shut down
 */
public record LogDirFailure(String dir, Map<TopicPartition, Uuid> partitions, boolean everyDirFailed) {
}
