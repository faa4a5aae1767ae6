package io.twinlog.mirror.runtime;

import org.apache.kafka.common.TopicPartition;

import java.util.Optional;
import java.util.function.Consumer;

/** The partitions this broker hosts, as the mirror runtime sees them (implemented by the server's replica manager). */
public interface LocalPartitions {
    /** The local replica of {@code tp}, if this broker hosts one (leader or follower). */
    Optional<MirrorLocalPartition> partition(TopicPartition tp);

    /**
     * Tells {@code listener} each time the high watermark of a partition this broker leads moves. It is called on
     * the thread that moved it (a request handler, possibly under the partition's lock): it only hands the news on.
     */
    void watchHighWatermarks(Consumer<TopicPartition> listener);
}
