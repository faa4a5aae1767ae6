package io.twinlog.replication;

import org.apache.kafka.common.TopicPartition;

/**
 * Told when a leader's high watermark moves. Called on the thread that moved it (a request handler or a fetch
 * from a follower) while the partition's leader lock may be held: implementations only hand the news on.
 */
@FunctionalInterface
public interface HighWatermarkListener {
    void onHighWatermarkUpdated(TopicPartition partition, long highWatermark);
}
