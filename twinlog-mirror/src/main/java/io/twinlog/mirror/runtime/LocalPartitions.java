package io.twinlog.mirror.runtime;

import org.apache.kafka.common.TopicPartition;

import java.util.Optional;

/** The partitions this broker hosts, as the mirror runtime sees them (implemented by the server's replica manager). */
@FunctionalInterface
public interface LocalPartitions {
    /** The local replica of {@code tp}, if this broker hosts one (leader or follower). */
    Optional<MirrorLocalPartition> partition(TopicPartition tp);
}
